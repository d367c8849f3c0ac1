"""What a model's reply becomes as events: the model call, notices about how it was read, and
an engine's failure."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from lar.agents.budget import BudgetSpent, Spent
from lar.agents.request import CallSniffer, LoopSettings
from lar.calling.constrained import AnswerStream
from lar.calling.prompt import clean_answer, this_requests_calls, this_requests_results
from lar.calling.protocol import KnownTools, parse
from lar.types import (
    Code,
    ErrorEvent,
    Message,
    ModelCalled,
    ModelResponse,
    Notice,
    TextDelta,
    ToolCall,
)

if TYPE_CHECKING:
    from lar.engines.base import Engine
    from lar.errors import EngineError
    from lar.tools.base import Tool
    from lar.types import ToolSpec

T = TypeVar("T")

__all__ = [
    "model_called",
    "engine_error",
    "parse_notices",
    "call_engine",
    "written_calls",
    "made_up",
    "shown_answer",
]


def model_called(
    turn: int, engine: Engine, response: ModelResponse, tool_calls: int, **more: Any
) -> ModelCalled:
    """The event for one model call, named by what answered (or the engine's own name)."""
    return ModelCalled(
        turn=turn,
        model=response.model or engine.name,
        engine=response.engine or engine.kind,
        usage=response.usage,
        timings=response.timings,
        tool_calls=tool_calls,
        source=response.source or engine.name,
        **more,
    )


def engine_error(exc: EngineError) -> ErrorEvent:
    return ErrorEvent(
        code=Code.ENGINE_ERROR,
        message=str(exc),
        kind=type(exc).__name__,
        status=exc.status,
        retryable=exc.retryable,
        engine=exc.engine,
        cause=exc,
    )


def parse_notices(response: ModelResponse, parsed: Any, engine: Engine) -> list[Notice]:
    """What the user should know of how a reply was read; a call in a reply cut off at
    max_tokens is taken out of ``parsed`` (it does not run)."""
    out = []
    if response.failover:
        shown = " | ".join(response.failover)
        by = response.model or engine.name
        out.append(Notice(Code.FAILOVER, f"answered by {by} after: {shown}"))
    if parsed.repaired:
        out.append(Notice(Code.REPAIRED, f"repaired malformed tool-call JSON ({parsed.format})"))
        if response.finish_reason == "length" and parsed.calls:
            # Mended JSON of a reply cut off at max_tokens: its last values are cut too.
            shown = ", ".join(c.name for c in parsed.calls)
            out.append(Notice(Code.CUT_CALL, f"not run, cut off at max_tokens: {shown}"))
            parsed.calls, parsed.text = [], ""
    out.extend(Notice(Code.PARSE_WARNING, w) for w in parsed.warnings)
    return out


def _specs(tools: Sequence[Tool] | None) -> list[ToolSpec] | None:
    return None if tools is None else [t.spec for t in tools]


async def call_engine(
    engine: Engine,
    messages: list[Message],
    tools: Sequence[Tool] | None,
    settings: LoopSettings,
    deltas: list[str],
    extra: dict[str, Any],
    limits: dict[str, Any] | None = None,
) -> AsyncIterator[TextDelta | ModelResponse]:
    """The engine's reply as it comes: text deltas to show, then the response. ``limits``:
    ``max_tokens`` and ``deadline_s`` (seconds the call may take) of the run's budget
    (lar.agents.budget); past the deadline the call is cancelled and ``BudgetSpent`` raised."""
    params = {**settings.params, **extra}
    deadline = limits.get("deadline_s") if limits else None
    if limits and limits.get("max_tokens") is not None:
        params["max_tokens"] = limits["max_tokens"]
    if not settings.stream:
        yield await _within(engine.generate(messages, _specs(tools), **params), deadline)
        return
    # A constrained reply is JSON: only its answer's text is shown as it comes.
    sniffer = AnswerStream() if "response_format" in extra else CallSniffer()
    ends = None if deadline is None else time.perf_counter() + deadline
    chunks = aiter(engine.stream(messages, _specs(tools), **params))
    while True:
        left = None if ends is None else max(0.0, ends - time.perf_counter())
        try:
            chunk = await _within(anext(chunks), left)
        except StopAsyncIteration:
            return
        if chunk.text:
            shown = sniffer.feed(chunk.text)
            if shown:
                deltas.append(shown)
                yield TextDelta(shown)
        if chunk.response is not None:
            yield chunk.response


async def _within(call: Awaitable[T], seconds: float | None) -> T:
    """``call``'s result, or ``BudgetSpent`` when it takes more than ``seconds``."""
    if seconds is None:
        return await call
    try:
        return await asyncio.wait_for(call, seconds)
    except TimeoutError:
        raise BudgetSpent(Spent("time_budget", seconds, seconds)) from None


_WRITTEN = re.compile(r"<tool_result>[^\S\n]*+\n?[^\S\n]*+([A-Za-z_][\w.\-]*+\([^\n]*\)) returned:")


def written_calls(
    text: str, known: KnownTools, history: Sequence[Message], harmless: Callable[[str], bool]
) -> list[ToolCall]:
    """Calls a reply wrote as results it made up instead of making them: shown results as
    ``<tool_result>name(args) returned: …``. Only calls of ``harmless`` tools (they read and
    change nothing) are taken to run: a made-up ``file_patch`` result after a question about a
    log would otherwise patch the log, with ``--yes`` unasked (``MadeUpResult`` asks for the
    call instead). A block for a call that ran since the user's last message is a copy of its
    data (an answer), not a call."""
    if "<tool_result" not in text or not known:
        return []
    calls: list[ToolCall] = []
    for shown in made_up(text, history):
        calls.extend(c for c in parse(shown, known).calls if harmless(c.name))
    return calls


def made_up(text: str, history: Sequence[Message]) -> list[str]:
    """The calls (as ``name(args)``) whose results a reply shows without their having been
    made since the user's last message."""
    if "<tool_result" not in text:
        return []
    ran = set(this_requests_calls(history))
    data, reads = _results_data(history), _reads(history)
    return [
        m.group(1)
        for m in _BLOCK.finditer(text[:20_000])
        if m.group(1) not in ran
        and not _copied(m.group(2), data)
        and not _narrowed(m.group(1), m.group(2), reads)
    ]


_BLOCK = re.compile(_WRITTEN.pattern + r"(.*?)(?:</tool_result>|\Z)", re.DOTALL)
"""A whole written result: its header (``_WRITTEN``) and what follows, to its closing tag."""

_MIN_COPY = 12
"""Characters a shown result must have to count as a copy of real data (a bare "3" is not)."""


def _results_data(history: Sequence[Message]) -> list[str]:
    return [" ".join(m.content.split()) for m in this_requests_results(history)]


def _copied(body: str, data: Sequence[str]) -> bool:
    """Whether a shown result's body is (part of) a result this request really got: the 1.5B
    copies a listing back under another tool's name ("file_list(…) returned:" over
    folder_list's data), and that is data misnamed, not an outcome made up."""
    shown = " ".join(body.split())
    return len(shown) >= _MIN_COPY and any(shown in d for d in data)


_ARGUMENT = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,)\s]+)')
_UNSET = frozenset({'""', "null", "[]", "{}"})
"""Arguments shown so were not given: a narrower call may fill them in."""


def _arguments(shown: str) -> tuple[str, dict[str, str]]:
    """A call as ``call_text`` shows it, split into its name and its arguments' shown values."""
    name, _, rest = shown.partition("(")
    return name.strip(), dict(_ARGUMENT.findall(rest[: rest.rfind(")")]))


def _reads(history: Sequence[Message]) -> list[tuple[str, dict[str, str], str]]:
    """The calls since the user's last message that got a result: their name, the arguments
    they were given (unset ones left out) and their result, spaces normalized."""
    results = {m.tool_call_id: m for m in this_requests_results(history) if not m.failed}
    reads = []
    for m in reversed(history):
        if m.role == "user":
            break
        for c in m.tool_calls:
            if c.id in results:
                shown = {k: json.dumps(v, ensure_ascii=False) for k, v in c.arguments.items()}
                given = {k: v for k, v in shown.items() if v not in _UNSET}
                reads.append((c.name, given, " ".join(results[c.id].content.split())))
    return reads


def _narrowed(shown: str, body: str, reads: Sequence[tuple[str, dict[str, str], str]]) -> bool:
    """Whether a block shows a narrower form of a call this request made — the same tool, every
    argument that call was given kept, others added or filled in (``keyword="version"`` on a
    read of the same file) — with a body found in that call's result. The 1.5B answers so: the
    value it read, under the call that would find it. That is the answer, not a call to make;
    a value not in the result, or a call on another target, is still made up."""
    value = " ".join(body.split())
    if not any(ch.isalnum() for ch in value):
        return False
    name, arguments = _arguments(shown)
    return any(
        name == ran and all(arguments.get(k) == v for k, v in given.items()) and value in result
        for ran, given, result in reads
    )


def shown_answer(text: str, history: Sequence[Message]) -> str:
    """A reply as the user would read it: without protocol markup (``clean_answer``) and
    without the results it made up (see ``made_up``): "wrote 100 characters to shopping.md"
    for a write never made is an invented outcome, not an answer."""
    if "<tool_result" in text:
        ran, data = set(this_requests_calls(history)), _results_data(history)
        reads = _reads(history)
        text = _BLOCK.sub(
            lambda m: (
                m.group(0)
                if m.group(1) in ran
                or _copied(m.group(2), data)
                or _narrowed(m.group(1), m.group(2), reads)
                else ""
            ),
            text[:20_000],
        )
    return clean_answer(text)
