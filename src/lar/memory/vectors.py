"""The vector side of recall: an HNSW index (usearch) kept in step with ``lar.db``.

``lar.db`` is the truth: a memory's vector sits in ``embedding_cache`` under its content hash, and
``memory_vectors`` lists, in commit order, which memory has a vector. Each process holds the index
in memory and, before every search, adds the rows that other processes committed since it last
looked (a watermark over ``memory_vectors.vseq``). The index is saved to
``$LAR_HOME/memory/vectors-<model>.usearch`` with its watermark, so a new process loads it in
milliseconds instead of rebuilding; a missing, stale or unreadable file only costs a rebuild.

Python's sqlite3 here cannot load extensions (so no sqlite-vec), and brute force over 100k
384-d vectors takes ~11 ms on two cores; HNSW answers in ~1–2 ms (bench/recall.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.db import Database

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["VectorIndex", "VECTOR_SCHEMA"]

VECTOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_vectors (
    vseq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_seq INTEGER NOT NULL,
    model TEXT NOT NULL,
    sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_vectors_model ON memory_vectors (model, vseq);
"""

EXACT_BELOW = 5_000  # vectors; brute force over 5k 384-d vectors takes about 1.7 ms here
_SAVE_LAG = 200  # close() rewrites the file when it lags this many rows (~0.2 s to catch up)


class VectorIndex:
    def __init__(self, db: Database, model: str, dim: int, path: Path | None = None) -> None:
        self.db = db
        self.model = model
        self.dim = dim
        self.path = path
        self.watermark = 0
        self._unsaved = 0
        self._lock = threading.Lock()
        self._index: Any = None
        db.executescript(VECTOR_SCHEMA)

    def _new(self) -> Any:
        from usearch.index import Index

        return Index(
            ndim=self.dim,
            metric="cos",
            dtype="f32",
            connectivity=16,
            expansion_add=64,
            expansion_search=128,
        )

    def _meta_path(self) -> Path | None:
        return self.path.with_suffix(".json") if self.path else None

    def _load(self) -> None:
        from usearch.index import Index

        meta = self._meta_path()
        if self.path and meta and self.path.exists():
            try:
                info = json.loads(meta.read_text())
                if info.get("model") == self.model and info.get("dim") == self.dim:
                    index = Index.restore(str(self.path))
                    if index is not None and index.ndim == self.dim and len(index) == info["rows"]:
                        self._index, self.watermark = index, int(info["watermark"])
                        return
            except (OSError, ValueError, KeyError, RuntimeError):
                pass  # an unreadable file only costs a rebuild
        self._index, self.watermark = self._new(), 0

    def refresh(self) -> int:
        """Add the vectors committed since the watermark; returns how many were added."""
        import numpy as np

        with self._lock:
            if self._index is None:
                self._load()
            rows = self.db.execute(
                "SELECT v.vseq, v.memory_seq, e.vector FROM memory_vectors v "
                "JOIN embedding_cache e ON e.model = v.model AND e.sha256 = v.sha256 "
                "WHERE v.model = ? AND v.vseq > ? ORDER BY v.vseq",
                (self.model, self.watermark),
            ).fetchall()
            if not rows:
                return 0
            keys = np.array([r[1] for r in rows], dtype=np.uint64)
            vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(
                len(rows), self.dim
            )
            fresh = ~np.array([k in self._index for k in keys.tolist()], dtype=bool)
            if fresh.any():
                self._index.add(keys[fresh], vectors[fresh], threads=0)
            self.watermark = int(rows[-1][0])
            self._unsaved += len(rows)
            return len(rows)

    def search(self, vector: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """(memory seq, cosine similarity) best first, from every committed vector."""
        self.refresh()
        if self._index is None or len(self._index) == 0:
            return []
        size = len(self._index)
        # Small stores are searched exhaustively: exact, the same answer every time, and still
        # cheaper than a millisecond or two; HNSW takes over where brute force would not be.
        found = self._index.search(vector, min(k, size), exact=size <= EXACT_BELOW)
        return [
            (int(key), 1.0 - float(dist))
            for key, dist in zip(found.keys.tolist(), found.distances.tolist(), strict=True)
        ]

    def vectors(self, seqs: list[int]) -> dict[int, npt.NDArray[np.float32]]:
        """The stored vectors of these memories (those the index holds), from memory."""
        import numpy as np

        if self._index is None or not seqs:
            return {}
        found = self._index.get(np.array(seqs, dtype=np.uint64))
        return {seq: vec for seq, vec in zip(seqs, found, strict=True) if vec is not None}

    def __len__(self) -> int:
        return 0 if self._index is None else len(self._index)

    def save(self) -> None:
        """Write the index and its watermark atomically (any process may; last one wins)."""
        meta = self._meta_path()
        if self.path is None or meta is None or self._index is None:
            return
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp_meta = meta.with_name(f"{meta.name}.{os.getpid()}.tmp")
            try:
                self._index.save(str(tmp))
                info = {
                    "model": self.model,
                    "dim": self.dim,
                    "rows": len(self._index),
                    "watermark": self.watermark,
                }
                tmp_meta.write_text(json.dumps(info))
                # The index first: a reader that sees new meta with the old index finds the row
                # count wrong and rebuilds; never the other way round.
                os.replace(tmp, self.path)
                os.replace(tmp_meta, meta)
                self._unsaved = 0
            finally:
                for leftover in (tmp, tmp_meta):
                    with contextlib.suppress(OSError):
                        leftover.unlink()

    def close(self) -> None:
        if self._unsaved and self.watermark - self._file_watermark() >= _SAVE_LAG:
            self.save()
        elif self._unsaved and self._file_watermark() == 0:
            self.save()

    def _file_watermark(self) -> int:
        meta = self._meta_path()
        try:
            return int(json.loads(meta.read_text())["watermark"]) if meta else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0
