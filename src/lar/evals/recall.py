"""The long-conversation recall set: load it, store its turns, score recall@k per method.

Format (``evals/memory/longconv.yaml``): ``now`` (a date), ``sessions`` (each a ``date`` and
``turns``; a turn starting with ``#tag `` holds an answer) and ``questions`` (``q``,
``evidence``: tags, ``kind``). Every turn is stored as an episode dated at its session (10:00
plus one minute per turn). recall@k for a question is the share of its evidence turns in the
top k; a question "fully answered" has all of them there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import yaml

from lar.errors import LarError
from lar.memory.recall import bm25_ranked, recall, vector_ranked
from lar.memory.store import MemoryStore, NewMemory

__all__ = ["RecallSet", "Question", "load_set", "ingest", "score", "METHODS", "memory_ids"]


class RecallSetError(LarError):
    pass


@dataclass(slots=True)
class Question:
    q: str
    evidence: list[str]
    kind: str


@dataclass(slots=True)
class RecallSet:
    now: float
    turns: list[tuple[str | None, str, float]]  # (tag, text, timestamp)
    questions: list[Question]
    tag_to_id: dict[str, str] = field(default_factory=dict)


def _day(value: object, where: str) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise RecallSetError(f"{where}: {value!r} is not a date (YYYY-MM-DD)") from None


def load_set(path: Path) -> RecallSet:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise RecallSetError(f"{path}: {exc}") from None
    turns: list[tuple[str | None, str, float]] = []
    for s, session in enumerate(data["sessions"]):
        day = _day(session["date"], f"{path}: sessions[{s}].date")
        for i, raw in enumerate(session["turns"]):
            tag = None
            text = str(raw)
            if text.startswith("#"):
                tag, _, text = text[1:].partition(" ")
            at = datetime(day.year, day.month, day.day, 10, i).timestamp()
            turns.append((tag, text, at))
    tags = [t for t, _, _ in turns if t]
    if len(tags) != len(set(tags)):
        dup = sorted({t for t in tags if tags.count(t) > 1})
        raise RecallSetError(f"{path}: tags used twice: {', '.join(dup)}")
    questions = [
        Question(str(q["q"]), [str(e) for e in q["evidence"]], q["kind"]) for q in data["questions"]
    ]
    for n, question in enumerate(questions):
        missing = [e for e in question.evidence if e not in tags]
        if missing:
            raise RecallSetError(f"{path}: questions[{n}] names unknown tags: {', '.join(missing)}")
    end = _day(data["now"], f"{path}: now")
    return RecallSet(datetime(end.year, end.month, end.day, 12).timestamp(), turns, questions)


def ingest(rs: RecallSet, store: MemoryStore) -> None:
    items = [NewMemory(text, "episode", "eval", 1.0, at) for _, text, at in rs.turns]
    ids = store.add_many(items, actor="eval")
    rs.tag_to_id = {tag: mid for (tag, _, _), mid in zip(rs.turns, ids, strict=True) if tag}


Method = Callable[[MemoryStore, str, int, float], list[str]]


def memory_ids(store: MemoryStore, seqs: list[int]) -> list[str]:
    """The ids of memories given by seq, in the same order."""
    if not seqs:
        return []
    marks = ",".join("?" * len(seqs))
    found = dict(store.db.execute(f"SELECT seq, id FROM memories WHERE seq IN ({marks})", seqs))
    return [found[s] for s in seqs]


METHODS: dict[str, Method] = {
    "BM25 alone": lambda st, q, k, now: memory_ids(st, bm25_ranked(st, q, k, now)),
    "vectors alone": lambda st, q, k, now: memory_ids(st, vector_ranked(st, q, k, now)),
    "Lar recall": lambda st, q, k, now: [
        r.record.id for r in recall(st, q, k=k, now=now, log_it=False)
    ],
}


@dataclass(slots=True)
class Score:
    recall: dict[str, float]  # by kind, plus "all"
    full: dict[str, float]
    counts: dict[str, int]
    misses: list[str]


def score(rs: RecallSet, store: MemoryStore, method: Method, k: int = 5) -> Score:
    found: dict[str, list[float]] = defaultdict(list)
    full: dict[str, list[float]] = defaultdict(list)
    misses: list[str] = []
    for question in rs.questions:
        top = set(method(store, question.q, k, rs.now))
        wanted = [rs.tag_to_id[t] for t in question.evidence]
        share = sum(w in top for w in wanted) / len(wanted)
        for key in (question.kind, "all"):
            found[key].append(share)
            full[key].append(float(share == 1.0))
        if share < 1.0:
            misses.append(question.q)
    return Score(
        {key: sum(v) / len(v) for key, v in found.items()},
        {key: sum(v) / len(v) for key, v in full.items()},
        {key: len(v) for key, v in found.items()},
        misses,
    )
