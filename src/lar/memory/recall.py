"""Hybrid recall (M1, M3): BM25 and vectors fused by score, a time window, decay and a threshold.

Candidates come from BM25 over the stemmed FTS5 index (a memory's words and, weighed less, those
of the turn it answers), from the nearest vectors in the HNSW index, and — when the question
names a time ("on March 14", "last week") — from the memories dated in that window. Their
scores are fused: BM25 scaled by the best BM25 score, plus half the cosine scaled over the
vector candidates, plus a bonus for the time window and for memories said by a speaker the
question names. Fusing scores rather than ranks keeps a list's clear winner on top: on LoCoMo's
dev half, rank fusion (RRF) found less evidence than one of its own two lists on one question
in five (bench/locomo_recall.py; docs/memory.md has the ablation). A candidate must reach a cosine
similarity threshold to be returned (empty beats wrong), and its fused score is weighed by a
type-specific time decay. Every recall is logged with its scores in ``memory_recalls``.
"""

from __future__ import annotations

import json
import logging
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from lar.memory.policy import STOPWORDS
from lar.memory.store import _RECORD_COLUMNS, MemoryRecord, MemoryStore
from lar.memory.when import time_window

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Recalled",
    "recall",
    "bm25_ranked",
    "bm25_scored",
    "vector_ranked",
    "vector_scored",
    "HALF_LIFE_DAYS",
    "why_nothing",
]

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
VECTOR_WEIGHT = 0.5  # cosine's share against BM25's; BM25 is the stronger list on real chat
CONTEXT_WEIGHT = 0.5  # a word of the turn a memory answers counts half a word of its own
TIME_BONUS = 1.0  # a memory dated in the window the question names
SPEAKER_BONUS = 0.3  # a memory said by the one speaker the question names
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
    "m.forgotten = 0 AND m.superseded_by IS NULL AND (m.retention_days IS NULL "
    "OR COALESCE(m.stored, m.created) + m.retention_days * 86400.0 > ?)"
)


# BM25 scores every row a term matches (FTS5 has no top-k pruning), ~3 µs a row here. Terms
# are taken rarest first while their rows add up to this budget; a term that alone matches
# more rows than that says little about the question and is left to the vectors.
POSTINGS_BUDGET = 1000


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("porter")


def _stem(word: str) -> str:
    """The index's form of a word (FTS5's porter over unicode61: no diacritics, and words of
    two letters or fewer left alone), so that its row count can be looked up."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return plain if len(plain) <= 2 else str(_stemmer().stemWord(plain))


def _selective_terms(store: MemoryStore, terms: list[str]) -> list[str]:
    stems = {t: _stem(t) for t in terms}
    unique = sorted(set(stems.values()))
    marks = ",".join("?" * len(unique))
    counts = dict(
        store.db.execute(
            f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", unique
        ).fetchall()
    )
    chosen: list[str] = []
    total = 0
    # A term whose stem the index does not list matches nothing, or is stemmed a little
    # differently by SQLite: let FTS5 decide rather than drop it.
    for term in sorted(terms, key=lambda t: counts.get(stems[t], 0)):
        rows = counts.get(stems[term], 0)
        if total + rows > POSTINGS_BUDGET:
            break
        chosen.append(term)
        total += rows
    return chosen


def bm25_scored(store: MemoryStore, query: str, n: int, now: float) -> list[tuple[int, float]]:
    """(memory seq, BM25 score) over the query's selective terms, best first (current
    records); a word of the turn a memory answers counts ``CONTEXT_WEIGHT`` of its own."""
    terms = _terms(query)
    terms = _selective_terms(store, terms) if terms else []
    if not terms:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    rows = store.db.execute(
        f"SELECT rowid, bm25(memories_fts, 1.0, {CONTEXT_WEIGHT}) AS r FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY r LIMIT ?",
        (match, n * 2),
    ).fetchall()
    active = _active(store, [r[0] for r in rows], now)
    return [(seq, -float(r)) for seq, r in rows if seq in active][:n]


def bm25_ranked(store: MemoryStore, query: str, n: int, now: float) -> list[int]:
    """Memory seqs by BM25 over the query's selective terms, best first (current records)."""
    return [seq for seq, _ in bm25_scored(store, query, n, now)]


def _query_vector(store: MemoryStore, query: str) -> npt.NDArray[np.float32] | None:
    if store.embedder is None:
        return None
    vector: npt.NDArray[np.float32] = store.embedder.encode([query])[0]
    return vector


def vector_scored(
    store: MemoryStore,
    query: str,
    n: int,
    now: float,
    vector: npt.NDArray[np.float32] | None = None,
) -> list[tuple[int, float]]:
    """(memory seq, cosine) best first (current, unexpired records only)."""
    if store.vectors is None:
        return []
    qv = _query_vector(store, query) if vector is None else vector
    if qv is None:
        return []
    # Superseded or forgotten records are still in the index; ask for extra and filter.
    hits = store.vectors.search(qv, n * 2)
    active = _active(store, [seq for seq, _ in hits], now)
    return [(seq, cos) for seq, cos in hits if seq in active][:n]


def vector_ranked(
    store: MemoryStore,
    query: str,
    n: int,
    now: float,
    vector: npt.NDArray[np.float32] | None = None,
) -> list[int]:
    """Memory seqs by cosine similarity, best first (current, unexpired records only)."""
    return [seq for seq, _ in vector_scored(store, query, n, now, vector)]


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


def _named_speaker(store: MemoryStore, query: str) -> str | None:
    """The one speaker of the store the query names by name, if exactly one."""
    words = {w.casefold() for w in _WORD.findall(query)}
    named = [s for s in store.speakers() if s.casefold() in words]
    return named[0] if len(named) == 1 else None


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
    fused: dict[int, float] = {}
    ranks: dict[int, list[int | None]] = {}
    bm25 = bm25_scored(store, query, candidates, now)
    for rank, (seq, score) in enumerate(bm25, 1):
        fused[seq] = score / bm25[0][1] if bm25[0][1] > 0 else 0.0
        ranks.setdefault(seq, [None, None, None])[0] = rank
    near = vector_scored(store, query, candidates, now, qv)
    if near:
        high, low = near[0][1], near[-1][1]
        for rank, (seq, cos) in enumerate(near, 1):
            scaled = (cos - low) / (high - low) if high > low else 1.0
            fused[seq] = fused.get(seq, 0.0) + VECTOR_WEIGHT * scaled
            ranks.setdefault(seq, [None, None, None])[1] = rank
    window = time_window(query, now)
    if window is not None:
        dated = _window_ranked(store, window, qv, candidates, now)
        for rank, seq in enumerate(dated, 1):
            fused[seq] = fused.get(seq, 0.0) + TIME_BONUS * (1 - (rank - 1) / len(dated))
            ranks.setdefault(seq, [None, None, None])[2] = rank
    if not fused:
        return []
    speaker = _named_speaker(store, query)
    marks = ",".join("?" * len(fused))
    rows = store.db.execute(
        f"SELECT seq, speaker, {_RECORD_COLUMNS} FROM memories WHERE seq IN ({marks})",
        tuple(fused),
    ).fetchall()
    vectors = store.vectors.vectors(list(fused)) if store.vectors is not None else {}
    results: list[Recalled] = []
    for row in rows:
        seq, said_by, record = row[0], row[1], MemoryRecord(*row[2:10])
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
        score = fused[seq] + (SPEAKER_BONUS if speaker and said_by == speaker else 0.0)
        r = ranks[seq]
        results.append(Recalled(record, score * decay, cosine, r[0], r[1], r[2]))
    results.sort(key=lambda x: x.score, reverse=True)
    return results[:k]


def why_nothing(
    store: MemoryStore, query: str, *, now: float | None = None, threshold: float = THRESHOLD
) -> str:
    """Why ``recall`` returned nothing for ``query``: nothing stored, nothing current, or
    nothing close enough (with the best score and the threshold it missed)."""
    now = time.time() if now is None else now
    total = store.db.execute("SELECT count(*) FROM memories").fetchone()[0]
    if total == 0:
        return "nothing is stored yet"
    current = store.db.execute(
        f"SELECT count(*) FROM memories m WHERE {_ACTIVE}", (now,)
    ).fetchone()[0]
    if current == 0:
        return (
            f"none of the {total} stored memories is current: each was forgotten, replaced "
            "by a newer version or is past its retention"
        )
    best = _recall_one(store, query, 1, now, -1.0, 40)
    if not best:
        return (
            f"none of the {current} current memories shares a word with it "
            "(and there is no embedder to compare meanings)"
        )
    if best[0].cosine is not None and best[0].cosine < threshold:
        return (
            f"none of the {current} current memories is close enough: the best, "
            f"{best[0].record.id}, has cosine {best[0].cosine:.2f}, below the threshold "
            f"{threshold:.2f} (memory.threshold)"
        )
    return f"none of the {current} current memories matched"


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
