"""What the loop does with a model's calls before running them, and the one-time nudges.

``prepare`` turns the parsed calls into the calls to run: names resolved and arguments coerced
(``coerce``), a list packed into a one-value parameter fanned out, the same call written twice
run once, and calls to tools that are not listed set apart (they are never run). The nudges
are short user messages shown once, for one turn, and never stored in the history: small
models correct themselves when told what went wrong in their own terms.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lar.calling.coerce import coerce_call, fan_out, fold_name, resolve_name
from lar.types import Code, ToolCall

if TYPE_CHECKING:
    from lar.calling.relevance import OffTopic, Relevance
    from lar.tools.base import Tool

__all__ = [
    "Prepared",
    "prepare",
    "Correction",
    "review_answer",
    "review_first_calls",
    "near_name",
    "invented_nudge",
    Code.DESCRIBED_CALL,
    "DESCRIBED_NUDGE",
    Code.ECHOED_ERROR,
    "error_nudge",
    "error_in_words",
    Code.ECHOED_RESULT,
    "ECHO_NUDGE",
    "ungrounded_nudge",
    "MORE_CALLS_NUDGE",
    "names_several",
    "more_calls",
]


@dataclass(slots=True)
class Prepared:
    calls: list[ToolCall] = field(default_factory=list)
    """The calls to run, in order."""
    invented: list[ToolCall] = field(default_factory=list)
    """Calls naming no listed tool."""
    changes: list[str] = field(default_factory=list)
    """Each coercion, for the ``coerced`` notice."""
    duplicates: int = 0


def prepare(
    calls: Sequence[ToolCall], tools: Mapping[str, Tool], key: Callable[[ToolCall], str]
) -> Prepared:
    """``key(call)`` identifies a call (name and arguments) for de-duplication."""
    out = Prepared()
    seen: set[str] = set()
    for call in calls:
        fixed, changes = coerce_call(call, tools)
        tool = tools.get(fixed.name)
        if tool is None:
            out.invented.append(call)
            continue
        out.changes.extend(f"{fixed.name}: {c}" for c in changes)
        spread = fan_out(fixed, tool)
        if spread is not None:
            out.changes.append(f"{fixed.name}: one call per item of a list ({len(spread)})")
        for one in spread or [fixed]:
            k = key(one)
            if k in seen:
                out.duplicates += 1
                continue
            seen.add(k)
            out.calls.append(one)
    return out


def near_name(name: str, names: Sequence[str]) -> str | None:
    """A listed tool whose name is close to ``name`` (a typo or a variant), else None."""
    exact = resolve_name(name, names)
    if exact is not None:
        return exact
    folded = {fold_name(n): n for n in names}
    last = fold_name(name.rsplit(".", 1)[-1])
    hits = difflib.get_close_matches(last, list(folded), n=2, cutoff=0.8)
    return folded[hits[0]] if len(hits) == 1 else None


def invented_nudge(name: str, names: Sequence[str]) -> str:
    near = near_name(name, names)
    if near is not None:
        return (
            f"There is no tool named {name}. If you meant {near}, call it with a "
            "<tool_call> block; otherwise answer my request in plain text."
        )
    listed = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
    return (
        f"There is no tool named {name}; the only tools are: {listed}. Answer my request in "
        "plain text yourself, or call one of those tools if one really fits."
    )


def ungrounded_nudge(invented: Sequence[tuple[str, str, Any]]) -> str:
    """Asks once for the step that finds values the model made up ((tool, argument, value)):
    a two-step request ("my order 3310 in euros") skipped to its second call with an
    invented amount, or a request no tool fits ("Say hello." → send_email to someone).
    Naming the order of steps ("call the tool that gives it, then …") is what moved the 1.5B
    to the first step; "if another tool finds that value" alone did not (docs/evals.md)."""
    shown = ", ".join(f"{a}={json.dumps(v, ensure_ascii=False)}" for _, a, v in invented)
    return (
        f"Not run: my request does not give {shown}. Find it first: call the listed tool that "
        f"gives it, then {invented[0][0]} with the value it returns. If no tool fits my request, "
        "answer it in plain text."
    )


MORE_CALLS_NUDGE = (
    "Check my request again: does it name more items than these calls cover (another city, "
    "number, room or action)? Reply with all the calls my request needs, one <tool_call> block "
    "each, including the ones above."
)
_SEVERAL_RE = re.compile(r"\band\b|&|,|;|\bboth\b|\balso\b", re.I)


def names_several(request: str) -> bool:
    """Whether a request may name several items ("Porto and Faro", "10, 20"): the cheap gate
    before asking for more calls, so a plain request costs no extra generation."""
    return bool(_SEVERAL_RE.search(request))


def more_calls(
    calls: Sequence[ToolCall],
    extra: Sequence[ToolCall],
    tools: Mapping[str, Tool],
    key: Callable[[ToolCall], str],
    context: str,
) -> list[ToolCall]:
    """The calls of ``extra`` worth adding to ``calls``: to listed tools, not already made,
    and with every required value found in ``context`` (asked for more, the 1.5B adds made-up
    items: Tokyo to "London, Paris and Madrid", MSFT to "AAPL and GOOG")."""
    from lar.calling.relevance import ungrounded

    seen = {key(c) for c in calls}
    out = []
    for call in prepare(extra, tools, key).calls:
        if key(call) in seen or ungrounded(tools[call.name], call.arguments, context):
            continue
        seen.add(key(call))
        out.append(call)
    return out


DESCRIBED_NUDGE = (
    "Do not describe the call or tell me how to make it: if a listed tool fits, your whole reply "
    "is the <tool_call> block; otherwise answer in plain text."
)
_DESCRIBE_RE = re.compile(r"\b(use|using|call|calling|invoke|run|running)\b", re.I)


def described_call(text: str, names: Sequence[str]) -> str | None:
    """The listed tool an answer talks about calling instead of calling it ("I would use the
    `get_forecast` tool…"), else None."""
    if not text or not _DESCRIBE_RE.search(text):
        return None
    for name in names:
        if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text):
            return name
    return None


def echoed_error(answer: str, errors: Sequence[str]) -> bool:
    """Whether the answer is (or merely repeats) a tool's error result."""
    text = answer.strip().strip("`").strip()
    if text.startswith("json"):
        text = text[4:].strip()
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict) and "error" in value:
        return True
    return any(e.strip() and e.strip() in answer for e in errors)


def _error_parts(content: str) -> tuple[str, str]:
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return content.strip(), ""
    if isinstance(value, dict):
        return str(value.get("error", "")), str(value.get("detail", ""))
    return content.strip(), ""


def error_nudge(name: str, content: str) -> str:
    error, detail = _error_parts(content)
    why = f"{error}: {detail}" if detail else error
    return (
        f"The call to {name} failed ({why}). Do not repeat the error message: answer my request "
        "in plain text without that tool, or say briefly what went wrong and what you need."
    )


def error_in_words(name: str, content: str) -> str:
    """A failed call, said as a sentence: what a user reads when the model only echoed it."""
    error, detail = _error_parts(content)
    text = f"I could not answer: the {name} tool failed ({error}"
    return text + (f": {detail})." if detail else ").")


ECHO_NUDGE = (
    "Do not repeat the tool result: answer my request in words, using it. If the result does "
    "not hold the answer, call the tool again with other arguments."
)


def echoed_result(answer: str, results: Sequence[str]) -> bool:
    """Whether the answer is only a copy of a tool result (at least 20 characters of it)."""
    said = " ".join(answer.split())
    return len(said) >= 20 and any(said == " ".join(r.split()) for r in results)


@dataclass(slots=True, frozen=True)
class Correction:
    """What the loop does about one reply instead of taking it: a notice for the user's view,
    then a nudge for the next turn or answer mode."""

    kind: str
    """Each kind is given once per run ("" for one that is not counted)."""
    code: Code
    """The ``Notice`` code."""
    message: str
    nudge: str = ""
    """Appended to the next request, for that turn only."""
    answer_mode: bool = False
    """The next turn withholds the tools and asks for the answer."""


def review_answer(
    answer: str,
    *,
    tools: Sequence[str],
    results: Sequence[str],
    errors: Sequence[tuple[str, str]],
    nudged: set[str],
    protocol: bool,
    answer_mode: bool,
    last_turn: bool,
) -> Correction | str:
    """A reply without calls: a one-time correction, or the answer to give.

    ``results`` are this run's successful tool results and ``errors`` its failed calls as
    (tool, content); ``nudged`` the kinds already given. Corrected once each: an answer that
    describes a call to a listed tool (protocol track), one that only copies a tool result, and
    one that repeats a tool's error. An error repeated again is said in words instead.
    """
    if protocol and not last_turn and not answer_mode and "described" not in nudged:
        talked = described_call(answer, tools)
        if talked is not None:
            return Correction(
                "described", Code.DESCRIBED_CALL, f"the model described a call to {talked}",
                DESCRIBED_NUDGE,
            )  # fmt: skip
    if protocol and not last_turn and "echo" not in nudged and echoed_result(answer, results):
        return Correction(
            "echo", Code.ECHOED_RESULT, "the model repeated a tool result as its answer", ECHO_NUDGE
        )
    if errors and echoed_error(answer, [c for _, c in errors]):
        name, content = errors[-1]
        if "error" not in nudged and not last_turn:
            return Correction(
                "error", Code.ECHOED_ERROR, f"the model repeated the error of {name}",
                error_nudge(name, content),
            )  # fmt: skip
        return error_in_words(name, content)
    return answer


def review_first_calls(
    calls: Sequence[ToolCall],
    verdicts: Sequence[OffTopic | None],
    relevance: Relevance,
    nudged: set[str],
) -> tuple[list[ToolCall], Correction | None]:
    """A run's first calls and the off-topic check's verdict on each (``Relevance.judge``):
    the calls to run now, and what to tell.

    All fit: all run. Some fit: they run first, and a call made in the same reply with a value
    nobody gave ("amount": "<order_result>") waits for their results. None fits and some value
    was invented: the step that finds it was skipped, or no tool fits; asked once. Otherwise
    none runs and the next turn is answer mode.
    """
    off = [(c, v) for c, v in zip(calls, verdicts, strict=True) if v is not None]
    if not off:
        return list(calls), None
    shown = "; ".join(f"{c.name} {v}" for c, v in off)
    if len(off) < len(calls):
        fitting = [c for c, v in zip(calls, verdicts, strict=True) if v is None]
        return fitting, Correction(
            "", Code.DEFERRED_CALL, f"not run: {shown}; the calls that fit run first"
        )
    invented = [(c.name, arg, c.arguments[arg]) for c, v in off for arg in v.invented]
    if invented and "ungrounded" not in nudged:
        return [], Correction(
            "ungrounded",
            Code.UNGROUNDED_CALL,
            f"not run: invented values (similarity {shown}); asking once for the call that "
            "finds them, or the answer",
            ungrounded_nudge(invented),
        )
    return [], Correction(
        "",
        Code.OFF_TOPIC_CALL,
        f"not run: unrelated to the request (similarity {shown}; threshold "
        f"{relevance.threshold:.2f}, values checked under {relevance.grounded_above:.2f}); "
        "asking for the answer without tools",
        answer_mode=True,
    )
