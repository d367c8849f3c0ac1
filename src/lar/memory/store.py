"""Long-term memory store (M1, M2, M6, M8): records in SQLite with FTS5, versions and a hash chain.

Every record carries the SHA-256 of its content and a chain hash over the previous record's chain
hash and its own fields, so editing a record's content outside Lar, or deleting a record, is
detected by ``verify``. Changes never overwrite: a new version supersedes the old one by a link,
and every action is written to an append-only audit log. The database is ``$LAR_HOME/lar.db``
(WAL, busy timeout, mode 0600), shared safely by several processes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lar.db import Database, shared
from lar.errors import LarError
from lar.memory import head as heads
from lar.memory.embed import CachedEmbedder, Embedder
from lar.memory.schema import FTS_STATEMENTS, SCHEMA
from lar.memory.vectors import VectorIndex

__all__ = ["MemoryStore", "MemoryRecord", "MemoryType", "Problem", "RETENTION_DAYS", "NewMemory"]

MemoryType = Literal["preference", "fact", "task", "episode", "skill"]
RETENTION_DAYS: dict[str, int | None] = {
    "preference": 180,
    "fact": 90,
    "task": 7,
    "episode": 365,
    "skill": None,
}
_GENESIS = "0" * 64
KEPT_FROM = "COALESCE(stored, created)"
"""The moment a record's retention counts from: when it was stored (older rows: created)."""


class MemoryError_(LarError):  # noqa: N801 - MemoryError is a builtin
    pass


@dataclass(slots=True)
class MemoryRecord:
    id: str
    type: str
    content: str
    source: str
    confidence: float
    created: float
    supersedes: str | None
    superseded_by: str | None


_RECORD_COLUMNS = "id, type, content, source, confidence, created, supersedes, superseded_by"


@dataclass(slots=True)
class NewMemory:
    """One record for ``add_many`` (bulk import, consolidation, benchmarks)."""

    content: str
    type: MemoryType = "fact"
    source: str = "user"
    confidence: float = 1.0
    created: float | None = None
    """When it happened or was said (an imported chat keeps its own dates); default: now."""
    session_id: str = ""
    context: str = ""
    """Text it is found by besides its own: in a conversation, the turn it answers."""
    speaker: str = ""
    """Who said it, when it comes from a conversation with named speakers."""


@dataclass(slots=True)
class Problem:
    memory_id: str
    kind: Literal[
        "content_changed",
        "fields_changed",
        "missing_before",
        "missing_at_end",
        "state_changed",
        "schema_changed",
        heads.Kind,
    ]
    detail: str


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _chain(prev: str, fields: dict[str, object]) -> str:
    return _sha(prev + json.dumps(fields, sort_keys=True, separators=(",", ":")))


_CHAINED = ("id", "type", "sha256", "source", "created", "supersedes")
_SEALED = (
    "id, type, sha256, source, confidence, created, retention_days, session_id, supersedes, "
    "superseded_by, forgotten, prev_hash, chain_hash, stored, speaker, context"
)
_TRIGGERS = ("memories_ai", "memory_audit_append_only", "memory_audit_no_delete")


def load_key(path: Path) -> bytes:
    """The store's sealing key, created (32 random bytes, 0600) on first use.

    It lives in Lar's home, which sandboxed code and file tools cannot see, so a record edited
    and re-chained with plain SHA-256 by anyone without it no longer matches its seal.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()  # another process made it first
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


class MemoryStore:
    """The long-term store; with an embedder, every record also gets a vector for recall."""

    def __init__(
        self,
        path: Path,
        embedder: Embedder | None = None,
        *,
        index_dir: Path | None = None,
        retention: Mapping[Any, int | None] | None = None,
        key: bytes | None = None,
    ) -> None:
        self.path = path
        self.db: Database = shared(path, SCHEMA, "memory")
        self.key = key if key is not None else load_key(path.with_name("memory.key"))
        self._migrate()
        self.head = heads.SealedHead(path.with_name("memory.head"), self.key)
        if not self.head.path.exists():  # a new store, or one older than the head: trusted once
            self.head.write(heads.current(self.db))
        self.retention = {**RETENTION_DAYS, **(retention or {})}
        self.embedder: CachedEmbedder | None = None
        self.vectors: VectorIndex | None = None
        self._speakers: set[str] = set()
        self._speakers_seen = 0  # the last seq whose speaker is in _speakers
        if embedder is not None:
            self.embedder = CachedEmbedder(embedder, self.db)
            index_path = index_dir / f"vectors-{embedder.name}.usearch" if index_dir else None
            self.vectors = VectorIndex(self.db, embedder.name, embedder.dim, index_path)
            self._backfill()

    def _migrate(self) -> None:
        """Bring older databases up to date: the seal column (records sealed once, trusting
        what they hold at that moment: there was nothing to check them against before); the
        context, speaker and stored columns (records resealed over them; ``stored`` of an old
        record is its ``created``); a stemmed index over content and context."""
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(memories)")}
        added = False
        for column, kind in (
            ("seal", "TEXT"),
            ("context", "TEXT NOT NULL DEFAULT ''"),
            ("speaker", "TEXT NOT NULL DEFAULT ''"),
            ("stored", "REAL"),
        ):
            if column not in columns:
                try:
                    self.db.execute(f"ALTER TABLE memories ADD COLUMN {column} {kind}")
                    added = column != "seal"
                except sqlite3.OperationalError:
                    pass  # another process added it meanwhile
        fts = self.db.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'memories_fts'"
        ).fetchone()
        rebuild = fts is not None and "context" not in fts[0]
        unsealed = self.db.execute("SELECT 1 FROM memories WHERE seal IS NULL LIMIT 1").fetchone()
        if not (rebuild or added or unsealed):
            return
        with self.db.transaction():
            if rebuild:
                for statement in (
                    "DROP TRIGGER IF EXISTS memories_ai",
                    "DROP TABLE IF EXISTS memories_vocab",
                    "DROP TABLE IF EXISTS memories_fts",
                    *FTS_STATEMENTS,
                ):
                    self.db.execute(statement)
                self.db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
            if added:
                self.db.execute("UPDATE memories SET stored = created WHERE stored IS NULL")
            where = "" if added else " WHERE seal IS NULL"
            for (mid,) in self.db.execute(f"SELECT id FROM memories{where}").fetchall():
                self._seal(mid)

    def _seal_of(self, row: Sequence[object]) -> str:
        data = json.dumps(list(row), separators=(",", ":"), ensure_ascii=False)
        return hmac.new(self.key, data.encode("utf-8"), hashlib.sha256).hexdigest()

    def _seal(self, memory_id: str) -> None:
        """(Re)compute a record's seal: an HMAC over every field, mutable state included."""
        row = self.db.execute(f"SELECT {_SEALED} FROM memories WHERE id = ?", (memory_id,))
        values = row.fetchone()
        if values is not None:
            self.db.execute(
                "UPDATE memories SET seal = ? WHERE id = ?", (self._seal_of(values), memory_id)
            )

    def _backfill(self) -> None:
        """Give a vector to records written without one (embedder off, or another model)."""
        assert self.embedder is not None
        total = self.db.execute("SELECT count(*) FROM memories").fetchone()[0]
        have = self.db.execute(
            "SELECT count(DISTINCT memory_seq) FROM memory_vectors WHERE model = ?",
            (self.embedder.name,),
        ).fetchone()[0]
        if have >= total:
            return
        rows = self.db.execute(
            "SELECT seq, content, sha256 FROM memories WHERE seq NOT IN "
            "(SELECT memory_seq FROM memory_vectors WHERE model = ?) ORDER BY seq",
            (self.embedder.name,),
        ).fetchall()
        for start in range(0, len(rows), 256):
            part = rows[start : start + 256]
            self.embedder.encode([r[1] for r in part])
            with self.db.transaction():
                for seq, _, sha in part:
                    if not self.db.execute(
                        "SELECT 1 FROM memory_vectors WHERE memory_seq = ? AND model = ?",
                        (seq, self.embedder.name),
                    ).fetchone():
                        self.db.execute(
                            "INSERT INTO memory_vectors (memory_seq, model, sha256) "
                            "VALUES (?, ?, ?)",
                            (seq, self.embedder.name, sha),
                        )

    def speakers(self) -> set[str]:
        """The names of everyone whose words are stored (kept up to date incrementally)."""
        top = self.db.execute("SELECT max(seq) FROM memories").fetchone()[0] or 0
        if top > self._speakers_seen:
            rows = self.db.execute(
                "SELECT DISTINCT speaker FROM memories WHERE seq > ? AND seq <= ? "
                "AND speaker != ''",
                (self._speakers_seen, top),
            ).fetchall()
            self._speakers.update(r[0] for r in rows)
            self._speakers_seen = top
        return self._speakers

    def close(self) -> None:
        if self.vectors is not None:
            self.vectors.close()
        self.db.close()

    def _audit(self, actor: str, action: str, memory_id: str, detail: str = "") -> None:
        self.db.execute(
            "INSERT INTO memory_audit (at, actor, action, memory_id, detail) "
            "VALUES (?, ?, ?, ?, ?)",
            (time.time(), actor, action, memory_id, detail),
        )

    def add(
        self,
        content: str,
        *,
        type: MemoryType = "fact",
        source: str = "user",
        confidence: float = 1.0,
        supersedes: str | None = None,
        actor: str = "user",
        session_id: str = "",
        created: float | None = None,
    ) -> str:
        """Store a record and return its id; ``supersedes`` makes it a new version of another."""
        item = NewMemory(content, type, source, confidence, created, session_id)
        return self.add_many([item], actor=actor, supersedes=supersedes)[0]

    def add_many(
        self, items: list[NewMemory], *, actor: str = "user", supersedes: str | None = None
    ) -> list[str]:
        """Store records in one transaction (vectors encoded first, outside it)."""
        if supersedes and len(items) != 1:
            raise MemoryError_("a new version supersedes one record at a time")
        for item in items:
            if item.type not in RETENTION_DAYS:
                raise MemoryError_(
                    f"unknown memory type {item.type!r}; allowed: {', '.join(RETENTION_DAYS)}"
                )
            item.content = item.content.strip()
            if not item.content:
                raise MemoryError_("a memory needs content")
        if self.embedder is not None:
            self.embedder.encode([item.content for item in items])  # into the cache
        ids: list[str] = []
        now = round(time.time(), 6)
        # One writer at a time: the chain needs the previous hash and the new row atomically.
        with self.db.transaction():
            row = self.db.execute(
                "SELECT chain_hash FROM memories ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            prev = row[0] if row else _GENESIS
            for item in items:
                memory_id = "m_" + secrets.token_hex(6)
                fields: dict[str, object] = {
                    "id": memory_id,
                    "type": item.type,
                    "sha256": _sha(item.content),
                    "source": item.source,
                    "created": now if item.created is None else round(item.created, 6),
                    "supersedes": supersedes,
                }
                chain = _chain(prev, fields)
                cur = self.db.execute(
                    "INSERT INTO memories (id, type, content, sha256, source, confidence, "
                    "created, retention_days, session_id, supersedes, prev_hash, chain_hash, "
                    "stored, context, speaker) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        memory_id,
                        item.type,
                        item.content,
                        fields["sha256"],
                        item.source,
                        item.confidence,
                        fields["created"],
                        self.retention[item.type],
                        item.session_id,
                        supersedes,
                        prev,
                        chain,
                        now,
                        item.context.strip(),
                        item.speaker.strip(),
                    ),
                )
                if self.embedder is not None:
                    self.db.execute(
                        "INSERT INTO memory_vectors (memory_seq, model, sha256) VALUES (?, ?, ?)",
                        (cur.lastrowid, self.embedder.name, fields["sha256"]),
                    )
                self._seal(memory_id)
                self._audit(
                    actor, "supersede" if supersedes else "add", memory_id, supersedes or ""
                )
                prev = chain
                ids.append(memory_id)
            if supersedes:
                cur = self.db.execute(
                    "UPDATE memories SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL",
                    (ids[-1], supersedes),
                )
                if cur.rowcount == 0:
                    raise MemoryError_(
                        f"cannot supersede {supersedes!r}: unknown or already superseded"
                    )
                self._seal(supersedes)
        self._advance_head()
        return ids

    def _advance_head(self) -> None:
        """Seal the new head, unless the store lost the old one (that alarm stays)."""
        try:
            if (sealed := self.head.read()) is None or heads.holds(self.db, sealed):
                self.head.write(heads.current(self.db))
        except heads.HeadForged:
            pass  # verify reports it

    def accept_head(self) -> None:
        """Accept the store as it is now (after a restore, or a loss the user knows of)."""
        self.head.write(heads.current(self.db), only_forward=False)

    def expire(self, now: float | None = None) -> list[str]:
        """The retention job: hide records past their retention (audited as ``expire``).

        Retention counts from when Lar stored a record, not from the date it carries: an
        archive imported with 2023 dates is kept as long as anything else Lar is given."""
        now = time.time() if now is None else now
        rows = self.db.execute(
            "SELECT id FROM memories WHERE forgotten = 0 AND retention_days IS NOT NULL "
            f"AND {KEPT_FROM} + retention_days * 86400.0 <= ?",
            (now,),
        ).fetchall()
        for (memory_id,) in rows:
            self.db.execute("UPDATE memories SET forgotten = 1 WHERE id = ?", (memory_id,))
            self._seal(memory_id)
            self._audit("retention", "expire", memory_id)
        return [r[0] for r in rows]

    def forget(self, memory_id: str, *, actor: str = "user") -> None:
        """Hide a record from recall; the record and its history stay (audited)."""
        cur = self.db.execute("UPDATE memories SET forgotten = 1 WHERE id = ?", (memory_id,))
        if cur.rowcount == 0:
            raise MemoryError_(f"no memory {memory_id!r}")
        self._seal(memory_id)
        self._audit(actor, "forget", memory_id)

    def _records(self, where: str, args: tuple[object, ...] = ()) -> list[MemoryRecord]:
        rows = self.db.execute(
            f"SELECT {_RECORD_COLUMNS} FROM memories WHERE {where}", args
        ).fetchall()
        return [MemoryRecord(*r) for r in rows]

    def records(self, *, include_old: bool = False) -> list[MemoryRecord]:
        where = "forgotten = 0" + ("" if include_old else " AND superseded_by IS NULL")
        return self._records(where + " ORDER BY seq")

    def export_rows(self, *, include_old: bool = False) -> list[dict[str, object]]:
        where = "" if include_old else "WHERE forgotten = 0 AND superseded_by IS NULL"
        rows = self.db.execute(
            "SELECT id, type, content, source, confidence, created, supersedes, superseded_by, "
            f"forgotten, session_id, retention_days FROM memories {where} ORDER BY seq"
        ).fetchall()
        keys = (
            "id",
            "type",
            "content",
            "source",
            "confidence",
            "created",
            "supersedes",
            "superseded_by",
            "forgotten",
            "session_id",
            "retention_days",
        )
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def audit(self) -> list[tuple[float, str, str, str, str]]:
        rows = self.db.execute(
            "SELECT at, actor, action, memory_id, detail FROM memory_audit ORDER BY seq"
        )
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows.fetchall()]

    def verify(self) -> list[Problem]:
        """Recompute content hashes and the chain; each problem names the record at fault."""
        problems: list[Problem] = []
        prev = _GENESIS
        rows = self.db.execute(
            "SELECT id, type, content, sha256, source, created, supersedes, prev_hash, chain_hash "
            "FROM memories ORDER BY seq"
        ).fetchall()
        for mid, mtype, content, sha, source, created, supersedes, prev_hash, chain in rows:
            if _sha(content) != sha:
                problems.append(
                    Problem(mid, "content_changed", "content does not match its SHA-256")
                )
            if prev_hash != prev:
                problems.append(
                    Problem(mid, "missing_before", "the record before it was deleted or altered")
                )
            fields = dict(
                zip(_CHAINED, (mid, mtype, sha, source, created, supersedes), strict=True)
            )
            if _chain(prev_hash, fields) != chain:
                problems.append(
                    Problem(mid, "fields_changed", "its fields do not match its chain hash")
                )
            prev = chain
        for mid, seal, *values in self.db.execute(
            f"SELECT id, seal, {_SEALED} FROM memories ORDER BY seq"
        ):
            if seal is None or not hmac.compare_digest(seal, self._seal_of(values)):
                problems.append(
                    Problem(
                        mid,
                        "state_changed",
                        "changed outside Lar (its seal does not match: content, chain, "
                        "forgotten or superseded state edited by hand)",
                    )
                )
        triggers = {
            r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        for name in _TRIGGERS:
            if name not in triggers:
                problems.append(
                    Problem("(schema)", "schema_changed", f"trigger {name} was dropped")
                )
        audited = self.db.execute(
            "SELECT memory_id FROM memory_audit WHERE action IN ('add', 'supersede') ORDER BY seq"
        ).fetchall()
        present = {r[0] for r in rows}
        for (mid,) in audited:
            if mid not in present:
                problems.append(Problem(mid, "missing_at_end", "audited as added but not present"))
        problems += [Problem(*p) for p in heads.problems(self.db, self.head, self.path)]
        return problems
