"""Tuned skills (K6): a better description and few-shot examples, learned offline from traces.

A skill's description is what decides whether it is picked: the model reads it in the listing,
and Lar's relevance check (lar.calling.relevance) and context budget rank tools by how close a
request is to it. For every skill with at least ``min_traces`` traces of requests it served, the
optimizer splits those requests into a training part and a held-out part (by trace id, so the
split is stable), proposes descriptions built from the training requests (the words they share
that the description lacks, as many as fit the listing line), picks the one whose listing line
ranks the skill first most often on the training part, and measures the original and the winner
on the held-out part: top-1 among all installed skills, by the sentence embedder memory uses.
Up to three training requests that share few words go with it as examples, shown when the
skill is opened (they are not part of the metric). Only a winner that is better on held-out
requests is written — as an overlay beside the skill
(``skills/<name>.overlay.json``), never into the skill, whose signature and lock stay valid.
``lar skill overlay remove`` deletes it and the skill is as it was.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lar.skills.manifest import Skill, SkillError, name_problem, short_line

if TYPE_CHECKING:
    from lar.traces import Trace

__all__ = ["Overlay", "Tuned", "apply_overlay", "optimize", "overlay_path", "read_overlay"]

Encode = Callable[[Sequence[str]], Any]
HELD_OUT = 0.3
LINE = 90
"""A skill's listing line is its description's first sentence, cut at this many characters."""
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_COMMON = frozenset(
    "the and for with from into that this what which please can you could would will about "
    "my our your its are was were have has how when where who why all any some one two me".split()
)


@dataclass(slots=True)
class Overlay:
    description: str
    examples: list[str]
    before: float
    after: float
    train: int
    held_out: int
    created: str = ""


@dataclass(slots=True)
class Tuned:
    """What the optimizer did for one skill."""

    name: str
    traces: int
    train: int = 0
    held_out: int = 0
    before: float | None = None
    after: float | None = None
    written: bool = False
    why: str = ""
    candidates: list[str] = field(default_factory=list)


def overlay_path(skills_root: Path, name: str) -> Path:
    """``skills/<name>.overlay.json`` beside the skill (never in it: its files stay as signed);
    ``SkillError`` for a name that is not a valid skill name."""
    problem = name_problem(name)
    if problem is not None:
        raise SkillError(problem)
    return skills_root / f"{name}.overlay.json"


def read_overlay(skills_root: Path, name: str) -> Overlay | None:
    path = overlay_path(skills_root, name)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        return Overlay(**{k: data[k] for k in Overlay.__dataclass_fields__ if k in data})
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise SkillError(f"{path}: not a readable overlay ({exc}); remove it") from None


def apply_overlay(skill: Skill, overlay: Overlay) -> Skill:
    """The skill as the model meets it with the overlay: its description replaced and the
    examples kept (shown when the skill is opened)."""
    skill.description = overlay.description
    skill.frontmatter = {**skill.frontmatter, "x-lar-examples": list(overlay.examples)}
    return skill


def served(trace: Trace, name: str) -> bool:
    tool = "skill_" + "".join(c if c.isalnum() else "_" for c in name.lower())
    return trace.success and any(s.kind == "tool" and s.name == tool and s.ok for s in trace.steps)


def _held_out(trace_id: str) -> bool:
    return int(hashlib.sha256(trace_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < HELD_OUT


def optimize(
    skills: Sequence[Skill],
    traces: Sequence[Trace],
    encode: Encode,
    skills_root: Path,
    *,
    min_traces: int = 20,
    only: str | None = None,
) -> list[Tuned]:
    """Tune each skill (or ``only`` that one) with enough traces; write the overlays that win."""
    requests = {s.name: [(t.id, t.query) for t in traces if served(t, s.name)] for s in skills}
    split = {
        name: ([q for i, q in rs if not _held_out(i)], [q for i, q in rs if _held_out(i)])
        for name, rs in requests.items()
    }
    texts = {s.name: short_line(s.description) for s in skills}
    out: list[Tuned] = []
    for skill in skills:
        if only is not None and skill.name != only:
            continue
        rs = requests[skill.name]
        tuned = Tuned(skill.name, len(rs))
        out.append(tuned)
        if len(rs) < min_traces:
            tuned.why = f"{len(rs)} traces, {min_traces} needed"
            continue
        train, held = split[skill.name]
        tuned.train, tuned.held_out = len(train), len(held)
        if not train or not held:
            tuned.why = "the traces did not split into training and held-out requests"
            continue
        candidates = _candidates(skill.description, train)
        tuned.candidates = candidates

        def score(text: str, part: int, name: str = skill.name) -> float:
            return _top1(name, text, texts, split, part, encode)

        best = max(candidates, key=lambda c: score(short_line(c), 0))
        tuned.before = score(texts[skill.name], 1)
        tuned.after = score(short_line(best), 1)
        if tuned.after <= tuned.before:
            tuned.why = "no candidate did better on the held-out requests; nothing written"
            continue
        overlay = Overlay(
            best, _diverse(train, 3), tuned.before, tuned.after, len(train), len(held),
            datetime.now(UTC).isoformat(timespec="seconds"),
        )  # fmt: skip
        path = overlay_path(skills_root, skill.name)
        text = json.dumps(dataclasses.asdict(overlay), indent=2, ensure_ascii=False)
        path.write_text(text + "\n")
        tuned.written = True
    return out


def _candidates(description: str, train: list[str]) -> list[str]:
    """The original, then the original's first sentence with the words the training requests
    share and it lacks, as many as fit the listing line."""
    first = short_line(description).rstrip(".…")
    have = {w.lower() for w in _WORD.findall(description)}
    counts = Counter(
        w for q in train for w in {w.lower() for w in _WORD.findall(q)} if w not in _COMMON
    )
    shared = [w for w, n in counts.most_common() if n >= 2 and w not in have]
    options = [description]
    for k in (2, 4, 6, 8):
        if len(shared) >= k or (k == 2 and shared):
            options.append(f"{first}: {', '.join(shared[:k])}.")
    return [o for o in dict.fromkeys(options) if o == description or len(o) <= LINE]


def _diverse(requests: list[str], k: int) -> list[str]:
    """Up to ``k`` requests that share few words with each other."""
    chosen: list[str] = []
    words = [set(_WORD.findall(q.lower())) for q in requests]
    while len(chosen) < min(k, len(requests)):
        taken = set().union(*(set(_WORD.findall(c.lower())) for c in chosen)) if chosen else set()
        best = max(
            (i for i in range(len(requests)) if requests[i] not in chosen),
            key=lambda i: (len(words[i] - taken), -i),
        )
        chosen.append(requests[best])
    return chosen


def _top1(
    name: str,
    text: str,
    texts: dict[str, str],
    split: dict[str, tuple[list[str], list[str]]],
    part: int,
    encode: Encode,
) -> float:
    """Share of the ``part`` requests (0 training, 1 held-out) of every skill that rank their
    own skill first, with ``name`` described by ``text``."""
    names = sorted(texts)
    docs = [text if n == name else texts[n] for n in names]
    queries = [(n, q) for n in names for q in split[n][part]]
    if not queries:
        return 0.0
    d = _unit(np.asarray(encode(docs), dtype=np.float32))
    q = _unit(np.asarray(encode([q for _, q in queries]), dtype=np.float32))
    best = (q @ d.T).argmax(axis=1)
    return float(np.mean([names[b] == n for b, (n, _) in zip(best, queries, strict=True)]))


def _unit(m: np.ndarray) -> np.ndarray:
    norms: np.ndarray = np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    return np.asarray(m / norms)
