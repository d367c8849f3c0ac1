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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lar.calling.coerce import coerce_call, fan_out, fold_name, resolve_name
from lar.types import ToolCall

if TYPE_CHECKING:
    from lar.tools.base import Tool

__all__ = [
    "Prepared",
    "prepare",
    "near_name",
    "invented_nudge",
    "closest_tools",
    "described_call",
    "DESCRIBED_NUDGE",
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


_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def closest_tools(
    name: str, arguments: Sequence[str], descriptions: Mapping[str, str], n: int = 2
) -> list[str]:
    """The listed tools (name → description) whose name or description shares most words of
    three letters or more with an invented call's name and argument names (``get_file_size`` →
    the tools that mention sizes), best first; none that share nothing."""
    words = {
        w.casefold() for part in (name, *arguments) for w in _PART.findall(part) if len(w) >= 3
    }
    scored = []
    for tool, text in descriptions.items():
        have = set(re.findall(r"\w+", f"{tool.replace('_', ' ')} {text}".casefold()))
        hits = sum(1 for w in words if w in have or w.rstrip("s") in have or w + "s" in have)
        if hits:
            scored.append((-hits, tool))
    return [tool for _, tool in sorted(scored)[:n]]


def invented_nudge(name: str, names: Sequence[str], closest: Sequence[str] = ()) -> str:
    near = near_name(name, names)
    if near is not None:
        return (
            f"There is no tool named {name}. If you meant {near}, call it with a "
            "<tool_call> block; otherwise answer my request in plain text."
        )
    if closest:
        shown = " or ".join(closest)
        return (
            f"There is no tool named {name}. {shown} may give what you need: call "
            f"{'one of them' if len(closest) > 1 else 'it'} with a <tool_call> block, or "
            "answer my request in plain text if neither fits."
        )
    listed = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
    return (
        f"There is no tool named {name}; the only tools are: {listed}. Answer my request in "
        "plain text yourself, or call one of those tools if one really fits."
    )


def ungrounded_nudge(invented: Sequence[tuple[str, str, Any]]) -> str:
    """Asks once for the step that finds values the model made up ((tool, argument, value)):
    a two-step request (the price of a stored item, converted) skipped to its second call with
    an invented amount, or a request no tool fits ("Greet me." → send_email to someone).
    Naming the order of steps ("call the tool that gives it, then …") is what moved the 1.5B
    to the first step; "if another tool finds that value" alone did not (docs/evals.md)."""
    shown = ", ".join(f"{a}={json.dumps(v, ensure_ascii=False)}" for _, a, v in invented)
    return (
        f"Not run: my request does not give {shown}. Find it first: call the listed tool that "
        f"gives it, then {invented[0][0]} with the value it returns. If no tool fits my request, "
        "answer it in plain text."
    )


MORE_CALLS_NUDGE = (
    "Check my request again: does it ask for more than these calls cover? Reply with all the "
    "calls my request needs, one <tool_call> block each, including the ones above."
)
_SEVERAL_RE = re.compile(
    r"(?<!\d),|,(?!\d)|[;&、，；]"  # a comma between digits is a number's (2,340; 3,5)
    r"|(?<![\w'-])(?:and|both|also|e|y|et|und|sowie|ambos|ambas|aussi|auch|também|también)"
    r"(?![\w'-])|[和与及跟]",
    re.I,
)


def names_several(request: str) -> bool:
    """Whether a request may name several items: a list separator or a joining word in one of
    the languages most users write (English, Portuguese, Spanish, French, German, Chinese).
    Only the cheap gate before asking for more calls, so a plain request costs no extra
    generation; where it misses, nothing is refused, the help is just not given."""
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
    items: cities or share symbols the request never named)."""
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


def described_call(text: str, names: Sequence[str], ran: Collection[str] = ()) -> str | None:
    """The listed tool an answer writes out instead of calling it ("I would use the
    `get_forecast` tool…", in any language), else None. A name counts when it is written as
    code (in backticks, or followed by ``(``) or is an identifier no prose has (``get_forecast``,
    ``getForecast``): a tool named ``search`` is not "described" by "I could not search". A tool
    in ``ran`` (it already gave this request a result) counts only written as code: "the
    file_read function" in a summary of what it read is a mention, not a call to make."""
    if not text:
        return None
    for name in names:
        word = rf"(?<![\w.]){re.escape(name)}(?![\w])"
        as_code = re.search(rf"`{re.escape(name)}`|{word}\s*\(", text)
        identifier = (
            name not in ran and re.search(r"[_.\d]|[a-z][A-Z]", name) and re.search(word, text)
        )
        if as_code or identifier:
            return name
    return None
