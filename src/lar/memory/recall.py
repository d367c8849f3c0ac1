"""Hybrid recall (M1, M3): BM25 and vectors fused by rank, a time window, decay and a threshold.

Three ranked lists are fused by reciprocal rank (RRF, k=60): BM25 over the FTS5 index, nearest
vectors from the HNSW index, and — when the question names a time ("on March 14", "last week")
— the memories written in that window ranked by similarity. A candidate must reach a cosine
similarity threshold to be returned (empty beats wrong), and its fused score is weighed by a
type-specific time decay. Every recall is logged with its scores in ``memory_recalls``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lar.memory.policy import STOPWORDS
from lar.memory.store import _RECORD_COLUMNS, MemoryRecord, MemoryStore
from lar.memory.when import time_window

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Recalled", "recall", "bm25_ranked", "vector_ranked", "HALF_LIFE_DAYS"]

log = logging.getLogger("lar.memory")

# How fast a memory's weight halves, by type; skills do not fade.
HALF_LIFE_DAYS: dict[str, float | None] = {
    "preference": 365.0,
    "fact": 180.0,
    "task": 7.0,
    "episode": 90.0,
    "skill": None,
}
# A mild tie-breaker: fused RRF scores of neighbouring ranks differ by a few per cent, so a
# stronger decay would bury old but exact matches (bench/recall_quality.py: 0.3 cost 5 points).
DECAY_WEIGHT = 0.03
# "now", "these days", "still"...: the question is about the current state, so newer wins.
RECENT_DECAY_WEIGHT = 0.3
_RECENT = re.compile(
    r"\b(now|nowadays|these days|currently|current|still|anymore|latest|at the moment)\b", re.I
)
RRF_K = 60
TIME_LIST_WEIGHT = 2.0  # a named time is a strong hint
BM25_WEIGHT = 1.0
THRESHOLD = 0.25  # cosine; below it a memory is not returned (empty beats wrong)

_WORD = re.compile(r"[\w']+", re.UNICODE)


@dataclass(slots=True)
class Recalled:
    record: MemoryRecord
    score: float
    cosine: float | None
    bm25_rank: int | None
    vector_rank: int | None
    time_rank: int | None

    def as_log(self) -> dict[str, object]:
        return {
            "id": self.record.id,
            "score": round(self.score, 5),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "bm25_rank": self.bm25_rank,
            "vector_rank": self.vector_rank,
            "time_rank": self.time_rank,
        }


def _terms(query: str) -> list[str]:
    words = [w.strip("'").lower() for w in _WORD.findall(query)]
    return list(dict.fromkeys(w for w in words if w and w not in STOPWORDS))


_ACTIVE = (
    "m.forgotten = 0 AND m.superseded_by IS NULL "
    "AND (m.retention_days IS NULL OR m.created + m.retention_days * 86400.0 > ?)"
)


# BM25 scores every row a term matches (FTS5 has no top-k pruning), ~3 µs a row here. Terms
# are taken rarest first while their rows add up to this budget; a term that alone matches
# more rows than that says little about the question and is left to the vectors.
POSTINGS_BUDGET = 1000


def _selective_terms(store: MemoryStore, terms: list[str]) -> list[str]:
    marks = ",".join("?" * len(terms))
    counts = dict(
        store.db.execute(
            f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", terms
        ).fetchall()
    )
    chosen: list[str] = []
    total = 0
    for term in sorted((t for t in terms if t in counts), key=lambda t: counts[t]):
        if total + counts[term] > POSTINGS_BUDGET:
            break
        chosen.append(term)
        total += counts[term]
    return chosen


def bm25_ranked(store: MemoryStore, query: str, n: int, now: float) -> list[int]:
    """Memory seqs by BM25 over the query's selective terms, best first (current records)."""
    terms = _terms(query)
    terms = _selective_terms(store, terms) if terms else []
    if not terms:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    rows = store.db.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
        (match, n * 2),
    ).fetchall()
    seqs = [r[0] for r in rows]
    active = _active(store, seqs, now)
    return [seq for seq in seqs if seq in active][:n]


def _query_vector(store: MemoryStore, query: str) -> npt.NDArray[np.float32] | None:
    if store.embedder is None:
        return None
    vector: npt.NDArray[np.float32] = store.embedder.encode([query])[0]
    return vector


def vector_ranked(
    store: MemoryStore,
    query: str,
    n: int,
    now: float,
    vector: npt.NDArray[np.float32] | None = None,
) -> list[int]:
    """Memory seqs by cosine similarity, best first (current, unexpired records only)."""
    if store.vectors is None:
        return []
    qv = _query_vector(store, query) if vector is None else vector
    if qv is None:
        return []
    # Superseded or forgotten records are still in the index; ask for extra and filter.
    hits = store.vectors.search(qv, n * 2)
    active = _active(store, [seq for seq, _ in hits], now)
    return [seq for seq, _ in hits if seq in active][:n]


def _active(store: MemoryStore, seqs: list[int], now: float) -> set[int]:
    if not seqs:
        return set()
    marks = ",".join("?" * len(seqs))
    rows = store.db.execute(
        f"SELECT m.seq FROM memories m WHERE m.seq IN ({marks}) AND {_ACTIVE}", (*seqs, now)
    ).fetchall()
    return {r[0] for r in rows}


def _window_ranked(
    store: MemoryStore,
    window: tuple[float, float],
    qv: npt.NDArray[np.float32] | None,
    n: int,
    now: float,
) -> list[int]:
    rows = store.db.execute(
        f"SELECT m.seq FROM memories m WHERE m.created >= ? AND m.created < ? AND {_ACTIVE} "
        "ORDER BY m.created LIMIT 2000",
        (window[0], window[1], now),
    ).fetchall()
    seqs = [r[0] for r in rows]
    if qv is None or store.vectors is None:
        return seqs[:n]
    vectors = store.vectors.vectors(seqs)
    scored = sorted(
        ((float(vectors[s] @ qv) if s in vectors else 0.0, s) for s in seqs), reverse=True
    )
    return [seq for _, seq in scored[:n]]


def recall(
    store: MemoryStore,
    query: str,
    *,
    k: int = 5,
    now: float | None = None,
    threshold: float = THRESHOLD,
    candidates: int = 40,
    session_id: str = "",
    log_it: bool = True,
    redact: Callable[[str], str] | None = None,
) -> list[Recalled]:
    """The best ``k`` current memories for ``query`` (possibly none), best first.

    ``redact`` masks secrets in the query before it is written to the recall log."""
    now = time.time() if now is None else now
    results = _recall_one(store, query, k, now, threshold, candidates)
    logged = redact(query) if redact else query
    _log(store, logged, time_window(query, now), results, session_id, log_it)
    return results


def _recall_one(
    store: MemoryStore,
    query: str,
    k: int,
    now: float,
    threshold: float,
    candidates: int,
) -> list[Recalled]:
    qv = _query_vector(store, query)
    decay_weight = RECENT_DECAY_WEIGHT if _RECENT.search(query) else DECAY_WEIGHT
    lists: list[tuple[list[int], float]] = [
        (bm25_ranked(store, query, candidates, now), BM25_WEIGHT),
        (vector_ranked(store, query, candidates, now, qv), 1.0),
    ]
    window = time_window(query, now)
    if window is not None:
        lists.append((_window_ranked(store, window, qv, candidates, now), TIME_LIST_WEIGHT))
    ranks: dict[int, list[int | None]] = {}
    fused: dict[int, float] = {}
    for which, (seqs, weight) in enumerate(lists):
        for rank, seq in enumerate(seqs, 1):
            fused[seq] = fused.get(seq, 0.0) + weight / (RRF_K + rank)
            ranks.setdefault(seq, [None, None, None])[which] = rank
    if not fused:
        return []
    marks = ",".join("?" * len(fused))
    rows = store.db.execute(
        f"SELECT seq, {_RECORD_COLUMNS} FROM memories WHERE seq IN ({marks})", tuple(fused)
    ).fetchall()
    vectors = store.vectors.vectors(list(fused)) if store.vectors is not None else {}
    results: list[Recalled] = []
    for row in rows:
        seq, record = row[0], MemoryRecord(*row[1:9])
        cosine = None
        if qv is not None and seq in vectors:
            cosine = float(vectors[seq] @ qv)
            if cosine < threshold:
                continue  # empty beats wrong
        half_life = HALF_LIFE_DAYS.get(record.type)
        decay = 1.0
        if half_life:
            age_days = max(0.0, now - record.created) / 86400
            decay = (1 - decay_weight) + decay_weight * 0.5 ** (age_days / half_life)
        r = ranks[seq]
        results.append(Recalled(record, fused[seq] * decay, cosine, r[0], r[1], r[2]))
    results.sort(key=lambda x: x.score, reverse=True)
    return results[:k]


def _log(
    store: MemoryStore,
    query: str,
    window: tuple[float, float] | None,
    results: list[Recalled],
    session_id: str,
    log_it: bool,
) -> None:
    if not log_it:
        return
    payload = json.dumps([r.as_log() for r in results])
    span = json.dumps([round(window[0]), round(window[1])]) if window else ""
    store.db.execute(
        "INSERT INTO memory_recalls (at, session_id, query, window, results) "
        "VALUES (?, ?, ?, ?, ?)",
        (time.time(), session_id, query, span, payload),
    )
    log.debug("recall %r window=%s -> %s", query, span or "-", payload)
