"""The off-topic check's dev set (evals/relevance/dev.jsonl) and how it is scored.

Shared by ``bench/relevance.py`` (the threshold table) and the test that keeps the threshold
honest, so both read and score the set the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lar.calling.relevance import OffTopic, Relevance
from lar.errors import LarError
from lar.evals.toolcalls import Case, build_tools
from lar.jsonl import read_jsonl
from lar.tools.builtin import builtin_tools

__all__ = ["Pair", "Replayed", "load_dev", "replay", "split_scores", "DEV_SET", "GROUNDING_SET"]

DEV_SET = Path(__file__).resolve().parents[3] / "evals" / "relevance" / "dev.jsonl"
"""In the source checkout (tests and bench/ use it from there)."""

GROUNDING_SET = DEV_SET.with_name("grounding.jsonl")
"""Held-out requests for the ungrounded-value signal (make_grounding.py)."""


@dataclass(frozen=True, slots=True)
class Pair:
    request: str
    tools: list[tuple[str, str]]  # (name, description)
    fits: str | None  # the tool that fits; None: no tool does


def load_dev(path: Path = DEV_SET) -> list[Pair]:
    """Every pair of a dev file; a line without request, tools or fits stops with file:line."""
    out = []
    for n, row in read_jsonl(path, comments=True):
        try:
            tools = [(str(t["name"]), str(t["description"])) for t in row["tools"]]
            out.append(Pair(str(row["request"]), tools, row["fits"]))
        except (KeyError, TypeError) as exc:
            raise LarError(
                f"{path}:{n}: needs request, tools [name, description], fits ({exc!r})"
            ) from None
    return out


def split_scores(rel: Relevance, pairs: list[Pair]) -> tuple[list[float], list[float]]:
    """(fitting, unrelated): each fitting narrow pair by its tool's score, each unrelated request
    by its best narrow tool (1.0 when it has only broad tools, which are never judged)."""
    broad = {t.name for t in builtin_tools() if t.broad}
    fitting: list[float] = []
    unrelated: list[float] = []
    for pair in pairs:
        narrow = [t for t in pair.tools if t[0] not in broad]
        scores = rel.scores(pair.request, narrow)
        if pair.fits is None:
            unrelated.append(max(scores.values()) if scores else 1.0)
        elif pair.fits in scores:
            fitting.append(scores[pair.fits])
    return fitting, unrelated


@dataclass(frozen=True, slots=True)
class Replayed:
    """One case's first calls as the off-topic rule judges them (``replay``)."""

    id: str
    fits: bool  # a tool fits the request (not an abstain case)
    calls: list[tuple[str, dict[str, Any]]]
    verdict: dict[str, OffTopic] | None  # None: the calls would run


def replay(rel: Relevance, cases: list[Case], results: list[dict[str, Any]]) -> list[Replayed]:
    """The off-topic rule replayed on the calls a model made (``lar eval --json`` rows, best
    run with the check off): each case with calls to listed tools, judged as the loop judges
    a run's first calls. Two-step cases keep only their first call."""
    by_id = {c.id: c for c in cases}
    out = []
    for row in results:
        case = by_id.get(str(row.get("id")))
        if case is None or not row.get("calls"):
            continue
        tools = {t.name: t for t in build_tools(case)}
        first = row["calls"][:1] if case.category == "two_step" else row["calls"]
        calls = [(tools[name], args) for name, args in first if name in tools]
        if not calls:
            continue
        verdict = rel.off_topic([case.question], calls)
        out.append(
            Replayed(case.id, case.category != "abstain", [(t.name, a) for t, a in calls], verdict)
        )
    return out
