"""Tool-calling evaluation suites (``lar eval``): JSONL cases, run through the real agent loop.

One case per line::

    {"id": "weather-1", "category": "single",
     "question": "What's the weather in Lisbon in celsius?",
     "tools": [{"name": "get_weather", "description": "Current weather for a city.",
                "parameters": {"type": "object",
                               "properties": {"city": {"type": "string"},
                                              "unit": {"enum": ["celsius", "fahrenheit"]}},
                               "required": ["city"]}}],
     "results": {"get_weather": "18 degrees, sunny"},
     "expect": {"calls": [{"name": "get_weather",
                           "arguments": {"city": "Lisbon", "unit": "celsius"}}]}}

- ``category``: ``single`` (one call, typed arguments), ``choose`` (one tool among similar
  ones), ``parallel`` (several calls, any order), ``abstain`` (no tool fits: answer without a
  call) or ``two_step`` (a call whose result the answer or a second call needs).
- ``results``: what each tool returns (the tools are stand-ins: nothing real runs); a value, or a
  list of ``{"arguments": {...}, "result": ...}`` to answer by arguments.
- ``expect``: ``calls`` (the calls that must be made; arguments compare as JSON, numbers within
  1e-6, strings without surrounding space; a parameter left out of the expected arguments must
  be absent or equal to its schema default), ``ordered`` (calls must come in this order, for
  ``two_step``), ``abstain: true`` (no call at all), ``answer_contains`` (the final answer must
  contain one of these strings, case-insensitively).

A suite that breaks the format fails before anything runs, with ``file:line: what is wrong``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lar.errors import LarError
from lar.jsonl import read_jsonl
from lar.tools.base import SchemaTool, Tool
from lar.types import Event, Final, ModelCalled, Notice, ToolCallStarted

__all__ = [
    "CATEGORIES",
    "Case",
    "CaseResult",
    "SuiteError",
    "load_suite",
    "load_suites",
    "run_case",
    "score_case",
    "summarize",
    "footprint",
    "default_suites",
]

CATEGORIES = ("single", "choose", "parallel", "abstain", "two_step")
_EXPECT_KEYS = {"calls", "ordered", "abstain", "answer_contains"}
_CASE_KEYS = {"id", "category", "question", "tools", "results", "expect"}


class SuiteError(LarError):
    pass


@dataclass(slots=True)
class Case:
    id: str
    category: str
    question: str
    tools: list[dict[str, Any]]
    expect: dict[str, Any]
    results: dict[str, Any] = field(default_factory=dict)
    source: str = ""


def _check(data: Any, where: str) -> Case:
    _check_keys(data, where)
    names = _check_tools(data["tools"], where)
    expect = data["expect"]
    _check_expect(expect, names, where)
    results = data.get("results", {})
    if not isinstance(results, dict):
        raise SuiteError(f"{where}: results must map tool names to what they return")
    case = Case(
        str(data["id"]),
        data["category"],
        data["question"],
        data["tools"],
        expect,
        results,
        source=where,
    )
    try:
        build_tools(case)
    except LarError as exc:
        raise SuiteError(f"{where}: {exc}") from None
    return case


def _check_keys(data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise SuiteError(f"{where}: a case must be a JSON object, not {type(data).__name__}")
    unknown = set(data) - _CASE_KEYS
    if unknown:
        raise SuiteError(
            f"{where}: unknown key {sorted(unknown)[0]!r}; allowed: {', '.join(sorted(_CASE_KEYS))}"
        )
    for key in ("id", "category", "question", "tools", "expect"):
        if key not in data:
            raise SuiteError(f"{where}: missing key {key!r}")
    if data["category"] not in CATEGORIES:
        raise SuiteError(
            f"{where}: category {data['category']!r} is not one of {', '.join(CATEGORIES)}"
        )
    if not isinstance(data["question"], str) or not data["question"].strip():
        raise SuiteError(f"{where}: question must be a non-empty string")


def _check_tools(tools: Any, where: str) -> list[str]:
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise SuiteError(f"{where}: tools must be a list of objects")
    names = []
    for i, t in enumerate(tools):
        if not isinstance(t.get("name"), str):
            raise SuiteError(f"{where}: tools[{i}] needs a name")
        names.append(t["name"])
    return names


def _check_expect(expect: Any, names: list[str], where: str) -> None:
    if not isinstance(expect, dict) or not expect:
        raise SuiteError(
            f"{where}: expect must be an object with calls, abstain or answer_contains"
        )
    bad = set(expect) - _EXPECT_KEYS
    if bad:
        raise SuiteError(
            f"{where}: expect: unknown key {sorted(bad)[0]!r}; "
            f"allowed: {', '.join(sorted(_EXPECT_KEYS))}"
        )
    for j, call in enumerate(expect.get("calls", [])):
        if not isinstance(call, dict) or call.get("name") not in names:
            raise SuiteError(
                f"{where}: expect.calls[{j}] names a tool the case does not define "
                f"({call.get('name') if isinstance(call, dict) else call!r})"
            )
    if expect.get("abstain") and expect.get("calls"):
        raise SuiteError(f"{where}: expect cannot both abstain and list calls")


def load_suite(path: Path) -> list[Case]:
    """Every case of a JSONL file; blank lines and lines starting with # are skipped."""
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for n, data in read_jsonl(path, comments=True, error=SuiteError):
        where = f"{path}:{n}"
        case = _check(data, where)
        if case.id in seen:
            raise SuiteError(f"{where}: id {case.id!r} already used at {seen[case.id]}")
        seen[case.id] = where
        cases.append(case)
    if not cases:
        raise SuiteError(f"{path}: no cases")
    return cases


def load_suites(paths: Iterable[Path]) -> list[Case]:
    """JSONL suites, and Berkeley Function Calling Leaderboard files (``BFCL_v4_*.json``, with
    their ``possible_answer/`` folder beside them; lar.evals.bfcl)."""
    from lar.evals.bfcl import load_bfcl

    out: list[Case] = []
    for p in paths:
        files = sorted([*p.glob("*.jsonl"), *p.glob("BFCL_v*_*.json")]) if p.is_dir() else [p]
        if not files:
            raise SuiteError(f"{p}: no .jsonl or BFCL_v*_*.json files in this directory")
        for f in files:
            out.extend(load_bfcl(f) if f.name.startswith("BFCL_v") else load_suite(f))
    return out


def default_suites() -> Path:
    """The suites shipped in the repository (``evals/tools``)."""
    return Path(__file__).resolve().parents[3] / "evals" / "tools"


def _answer(spec: Any, arguments: dict[str, Any]) -> Any:
    if isinstance(spec, list) and all(isinstance(s, dict) and "arguments" in s for s in spec):
        for s in spec:
            if _same(s["arguments"], arguments):
                return s.get("result")
        return "error: no data for these arguments"
    return spec


def build_tools(case: Case) -> list[Tool]:
    tools: list[Tool] = []
    for t in case.tools:
        spec = case.results.get(t["name"], "ok")

        def fn(_spec: Any = spec, **kwargs: Any) -> Any:
            return _answer(_spec, kwargs)

        tools.append(
            SchemaTool(
                t["name"],
                t.get("description", ""),
                t.get("parameters", {"type": "object", "properties": {}}),
                fn,
            )
        )
    return tools


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().rstrip(".!").strip().casefold()
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    a, b = _norm(a), _norm(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _args_match(expected: dict[str, Any], got: dict[str, Any], schema: dict[str, Any]) -> bool:
    props = schema.get("properties", {})
    for key, value in got.items():
        if key in expected:
            continue
        default = props.get(key, {}).get("default", _MISSING)
        if default is _MISSING or not _same(default, value):
            return False
    return all(k in got and _same(v, got[k]) for k, v in expected.items())


_MISSING = object()


@dataclass(slots=True)
class CaseResult:
    case: Case
    ok: bool
    why: str
    calls: list[tuple[str, dict[str, Any]]]
    answer: str
    tokens: int
    latency_ms: float
    repaired: bool
    error: str | None = None
    coerced: bool = False
    parts: dict[str, int] = field(default_factory=dict)
    """Prompt tokens per part (system, tools, memory, history) of the task's first call."""
    wrote_calls: bool = False
    """The model wrote a call, run or not (a refused off-topic call counts)."""
    fired: dict[str, int] = field(default_factory=dict)
    """Verdicts per policy (lar.agents.policies) in this case."""
    refused: int = 0
    """Calls a policy refused (``off_topic_call`` notices)."""
    variant: str = ""
    """The policies left out (``lar eval --ablate``): ``-name``, or "" for the full profile."""
    asked: dict[str, int] = field(default_factory=dict)
    """Questions to the model per policy (those that asked, whatever they then decided)."""
    reused: bool = False
    """An ablation result taken from the full profile's: the policy neither spoke nor asked
    in this case, so without it the run is the same (greedy decoding)."""

    @property
    def refused_fitting(self) -> bool:
        """A policy refused a call in a case that needs one: help that hurt."""
        return self.refused > 0 and bool(self.case.expect.get("calls"))

    def row(self, track: str) -> dict[str, Any]:
        """The JSON line ``lar eval --json`` writes (and ``--resume`` reads back)."""
        return {
            "track": track, "variant": self.variant, "fired": self.fired,
            "asked": self.asked, "reused": self.reused, "refused": self.refused,
            "id": self.case.id, "category": self.case.category, "ok": self.ok,
            "why": self.why, "calls": self.calls, "answer": self.answer, "tokens": self.tokens,
            "latency_ms": round(self.latency_ms, 1), "repaired": self.repaired,
            "coerced": self.coerced, "parts": self.parts, "error": self.error,
            "wrote_calls": self.wrote_calls,
        }  # fmt: skip

    @classmethod
    def from_row(cls, case: Case, row: dict[str, Any]) -> CaseResult:
        try:
            return cls(
                case, bool(row["ok"]), str(row["why"]),
                [(str(n), dict(a)) for n, a in row["calls"]], str(row["answer"]),
                int(row["tokens"]), float(row["latency_ms"]), bool(row["repaired"]),
                row.get("error"), bool(row.get("coerced", False)),
                {str(k): int(v) for k, v in (row.get("parts") or {}).items()},
                # rows written before the field: a call ran, or one was repaired or coerced
                bool(row.get("wrote_calls", row["calls"] or row["repaired"]
                              or row.get("coerced"))),
                {str(k): int(v) for k, v in (row.get("fired") or {}).items()},
                int(row.get("refused", 0)), str(row.get("variant", "")),
                {str(k): int(v) for k, v in (row.get("asked") or {}).items()},
                bool(row.get("reused", False)),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise SuiteError(f"not a lar eval result ({type(exc).__name__}: {exc})") from None


def score_case(
    case: Case, calls: Sequence[tuple[str, dict[str, Any]]], answer: str
) -> tuple[bool, str]:
    expect = case.expect
    if "bfcl" in expect:  # a Berkeley Function Calling Leaderboard case: its own rules
        from lar.evals.bfcl import bfcl_check

        return bfcl_check(expect, calls)
    schemas = {t["name"]: t.get("parameters", {}) for t in case.tools}
    if expect.get("abstain"):
        if calls:
            return False, f"called {calls[0][0]} where no tool fits"
    wanted = list(expect.get("calls", []))
    if wanted:
        if expect.get("ordered"):
            if len(calls) < len(wanted):
                return False, f"{len(calls)} of {len(wanted)} calls made"
            for w, (name, args) in zip(wanted, calls, strict=False):
                if w["name"] != name or not _args_match(
                    w.get("arguments", {}), args, schemas.get(name, {})
                ):
                    return False, f"expected {w['name']}{w.get('arguments', {})}, got {name}{args}"
        else:
            left = list(calls)
            for w in wanted:
                hit = next(
                    (
                        c
                        for c in left
                        if c[0] == w["name"]
                        and _args_match(w.get("arguments", {}), c[1], schemas[c[0]])
                    ),
                    None,
                )
                if hit is None:
                    got = "; ".join(f"{n}{a}" for n, a in calls) or "no call"
                    return False, f"missing {w['name']}{w.get('arguments', {})} (got {got})"
                left.remove(hit)
            if left:
                return False, f"extra call {left[0][0]}{left[0][1]}"
    contains = expect.get("answer_contains")
    if contains:
        low = answer.lower()
        if not any(str(c).lower() in low for c in contains):
            return False, f"answer {answer[:80]!r} has none of {contains}"
    return True, "ok"


def run_case(case: Case, make_agent: Callable[[list[Tool]], Any]) -> CaseResult:
    """Run one case through an agent built by ``make_agent(tools)`` (its ``run`` method)."""
    agent = make_agent(build_tools(case))
    events: list[Event] = []
    error = None
    t0 = time.perf_counter()
    try:
        events = agent.run(case.question).events
    except LarError as exc:
        error = str(exc)
    finally:
        close = getattr(agent, "close", None)
        if close is not None:
            close()
    latency = (time.perf_counter() - t0) * 1000
    calls = [
        (e.call.name, dict(e.call.arguments)) for e in events if isinstance(e, ToolCallStarted)
    ]
    answer = next((e.text for e in events if isinstance(e, Final)), "")
    tokens = sum(e.usage.total_tokens for e in events if isinstance(e, ModelCalled))
    repaired = any(isinstance(e, Notice) and e.code == "repaired" for e in events)
    repaired = repaired or any(isinstance(e, ModelCalled) and e.repaired for e in events)
    coerced = any(isinstance(e, Notice) and e.code == "coerced" for e in events)
    parts = next((dict(e.prompt_parts) for e in events if isinstance(e, ModelCalled)), {})
    wrote = any(isinstance(e, ModelCalled) and e.tool_calls for e in events)
    fired: dict[str, int] = {}
    for e in events:
        if isinstance(e, Notice) and e.policy:
            fired[e.policy] = fired.get(e.policy, 0) + 1
    refused = sum(1 for e in events if isinstance(e, Notice) and e.code == "off_topic_call")
    asked: dict[str, int] = {}
    for e in events:
        if isinstance(e, ModelCalled) and e.policy:
            asked[e.policy] = asked.get(e.policy, 0) + 1
    if error is not None:
        ok, why = False, f"error: {error}"
    else:
        ok, why = score_case(case, calls, answer)
    return CaseResult(
        case, ok, why, calls, answer, tokens, latency, repaired, error, coerced, parts, wrote,
        fired, refused, asked=asked,
    )  # fmt: skip


@dataclass(slots=True)
class Summary:
    category: str
    cases: int
    correct: int
    tokens: float
    latency_ms: float
    repaired: int
    with_calls: int
    """Cases where the model wrote a call, run or not: what ``repaired`` and ``coerced``
    are counted against."""
    coerced: int = 0

    @property
    def accuracy(self) -> float:
        return self.correct / self.cases if self.cases else 0.0


def footprint(results: Sequence[CaseResult]) -> dict[str, float]:
    """Mean prompt tokens per part over the tasks' first calls (tasks that report parts)."""
    measured = [r.parts for r in results if r.parts]
    if not measured:
        return {}
    keys = sorted(
        {k for p in measured for k in p},
        key=lambda k: (k not in _PART_ORDER, _PART_ORDER.index(k) if k in _PART_ORDER else 0, k),
    )
    return {k: sum(p.get(k, 0) for p in measured) / len(measured) for k in keys}


_PART_ORDER = ["system", "tools", "memory", "history"]


def summarize(results: Sequence[CaseResult]) -> list[Summary]:
    """Per category, then ``all``."""
    out = []
    groups = [(c, [r for r in results if r.case.category == c]) for c in CATEGORIES]
    groups.append(("all", list(results)))
    for name, rs in groups:
        if not rs:
            continue
        out.append(
            Summary(
                name,
                len(rs),
                sum(r.ok for r in rs),
                sum(r.tokens for r in rs) / len(rs),
                sum(r.latency_ms for r in rs) / len(rs),
                sum(r.repaired for r in rs),
                sum(1 for r in rs if r.calls or r.wrote_calls),
                sum(r.coerced for r in rs),
            )
        )
    return out
