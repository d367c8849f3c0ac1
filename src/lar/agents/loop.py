"""The agent loop (A1, A2, A3): an async generator of typed events.

Code controls execution; the model only decides. Each turn: build the prompt, call the engine,
extract tool calls (native or protocol track), check them with the loop guard, run them through
the executor, feed results back marked as data. Nothing here prints: the CLI, the server and the
tests all consume the same event stream.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lar.agents.context import MemoryParts, TokenCounter, fit, render_memory
from lar.agents.guard import LoopGuard, call_hash
from lar.agents.state import Status, TaskRecorder
from lar.calling.corrections import (
    MORE_CALLS_NUDGE,
    Correction,
    invented_nudge,
    more_calls,
    names_several,
    prepare,
    review_answer,
    review_first_calls,
)
from lar.calling.native import extract_calls
from lar.calling.prompt import (
    ANSWER_MODE_TAIL,
    NEXT_STEP_TAIL,
    REPLY_TOOL,
    answer_mode_note,
    call_text,
    clean_answer,
    fold_tool_results,
    has_reply,
    protocol_system_prompt,
    take_reply,
)
from lar.calling.relevance import Relevance
from lar.engines.base import Engine
from lar.errors import EngineError
from lar.telemetry.records import EnergyMeter
from lar.tools.base import Tool, ToolContext
from lar.tools.builtin.interaction import CHECKPOINT_KEY
from lar.tools.executor import ToolExecutor, tool_names
from lar.types import (
    Code,
    ErrorEvent,
    Event,
    Final,
    Message,
    ModelCalled,
    ModelResponse,
    Notice,
    RunStarted,
    TextDelta,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolError,
    ToolResult,
    ToolSpec,
    Usage,
)

__all__ = [
    "LoopSettings",
    "run_loop",
    "DEFAULT_SYSTEM_PROMPT",
    "MEMORY_KEY",
    "system_message",
    "render_history",
    "fit_request",
]

CUT_KEY = "context_cut"
"""``ctx.state`` key: rounds of history the last prompt left out (kept while they fit)."""
MEMORY_KEY = "memory_context"
"""``ctx.state`` key: what memory contributes to the system prompt (index, recall, last task)."""

Track = Literal["native", "protocol"]

DEFAULT_SYSTEM_PROMPT = (
    "You are Lar, a helpful assistant running on the user's own computer. "
    "Answer briefly and correctly. Use a tool when it helps; never invent tool results."
)
_CALL_MARKERS = ("<tool", "<function", "{", "[", "```", "action:", "[tool_calls]", "<think")


@dataclass(slots=True)
class LoopSettings:
    track: Track = "protocol"
    max_turns: int = 8
    stream: bool = False
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    params: dict[str, Any] = field(default_factory=dict)
    codeact: bool = False
    n_ctx: int | None = None
    """Context window; when set, the prompt is fitted to it (X2–X5)."""
    reserve: int = 512
    """Tokens kept free for the answer."""
    counter: TokenCounter | None = None
    """Shared across runs so a text is tokenized once."""
    meter: EnergyMeter | None = None
    """Measures each model call's energy (O2); None: not measured."""
    relevance: Relevance | None = None
    """Protocol track: judges a run's first calls off-topic (lar.calling.relevance)."""


def system_message(
    settings: LoopSettings,
    tools: Sequence[Tool],
    ctx: ToolContext,
    *,
    answer_mode: bool,
    memory: MemoryParts | None = None,
    summary: str = "",
    history: Sequence[Message] = (),
) -> Message:
    base = settings.system_prompt
    if answer_mode:
        text = f"{base}\n\n{answer_mode_note(history)}"
    elif settings.track == "protocol":
        text = protocol_system_prompt(base, tools)
    else:
        text = base
    if memory is None:
        memory = MemoryParts.from_state(ctx.state.get(MEMORY_KEY))
    rendered = render_memory(memory)
    if rendered:
        text += f"\n\n{rendered}"
    if summary:
        text += f"\n\nProgress so far: {summary}"
    checkpoint = ctx.state.get(CHECKPOINT_KEY)
    if checkpoint:
        text += f"\n\nYour working checkpoint (your own notes on this task):\n{checkpoint}"
    return Message("system", text)


def render_history(history: list[Message], track: Track, *, answer_mode: bool) -> list[Message]:
    if track != "protocol":
        return history
    rendered = fold_tool_results(history)
    if rendered and rendered[-1].role == "user" and "<tool_result" in rendered[-1].content:
        # An instruction right after the data steers small models better than the system
        # prompt. With the tools still listed the model may call the next one it needs.
        tail = ANSWER_MODE_TAIL if answer_mode else NEXT_STEP_TAIL
        rendered[-1] = Message("user", rendered[-1].content + tail)
    return rendered


def _with_nudge(request: list[Message], nudge: str) -> list[Message]:
    """The request with a one-turn correction after the user's last words.

    Appended to the last user message rather than sent after the model's faulty reply: shown
    their own reply, small models repeat it word for word (measured: a described call came
    back unchanged).
    """
    last = request[-1]
    if last.role == "user":
        return [*request[:-1], Message("user", f"{last.content}\n\n{nudge}")]
    return [*request, Message("user", nudge)]


def _last_requests(history: list[Message], n: int = 2) -> list[str]:
    """The user's last ``n`` messages, newest first."""
    return [m.content for m in reversed(history) if m.role == "user"][:n]


def _grounding_text(history: list[Message], ctx: ToolContext) -> str:
    """Where a first call's values may come from: the conversation and what memory adds."""
    memory = render_memory(MemoryParts.from_state(ctx.state.get(MEMORY_KEY)))
    return "\n".join([*(m.content for m in history if m.content), memory])


def _model_called(
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


def _blocked(call: ToolCall, reason: str) -> ToolResult:
    err = ToolError(error="loop detected", detail=reason, code=Code.LOOP_BLOCKED)
    return ToolResult(call.id, call.name, reason, ok=False, error=err)


def _rerun_confirmed(call: ToolCall, ctx: ToolContext) -> bool:
    if ctx.ask_user is None:
        return False
    answer = ctx.ask_user(
        f"The task was cut off while {call_text(call.name, call.arguments)} was running, so it "
        "may or may not have taken effect. Run it again? (yes/no)"
    )
    return (answer or "").strip().lower() in ("y", "yes")


def _unknown_outcome(call: ToolCall) -> ToolResult:
    detail = (
        "the task was cut off while this call was running; it may or may not have taken "
        "effect, so it was not run again. Check its effect before repeating it"
    )
    return ToolResult(
        call.id,
        call.name,
        f"outcome unknown: {detail}",
        ok=False,
        error=ToolError("outcome unknown", detail, Code.UNKNOWN_OUTCOME),
    )


def _skipped(call: ToolCall) -> ToolResult:
    detail = "not run: an earlier call in this turn failed"
    return ToolResult(
        call.id, call.name, detail, ok=False, error=ToolError("skipped", detail, Code.SKIPPED)
    )


class _CallSniffer:
    """Holds back streamed text while it may still turn out to be a tool call."""

    def __init__(self) -> None:
        self.buffer = ""
        self.released = False

    def feed(self, text: str) -> str:
        if self.released:
            return text
        self.buffer += text
        head = self.buffer.lstrip().lower()
        undecided = not head or any(head.startswith(m) or m.startswith(head) for m in _CALL_MARKERS)
        if undecided:
            return ""
        self.released = True
        out, self.buffer = self.buffer, ""
        return out


def _specs(tools: Sequence[Tool] | None) -> list[ToolSpec] | None:
    return None if tools is None else [t.spec for t in tools]


async def _call_engine(
    engine: Engine,
    messages: list[Message],
    tools: Sequence[Tool] | None,
    settings: LoopSettings,
    deltas: list[str],
) -> AsyncIterator[TextDelta | ModelResponse]:
    if not settings.stream:
        yield await engine.generate(messages, _specs(tools), **settings.params)
        return
    sniffer = _CallSniffer()
    async for chunk in engine.stream(messages, _specs(tools), **settings.params):
        if chunk.text:
            shown = sniffer.feed(chunk.text)
            if shown:
                deltas.append(shown)
                yield TextDelta(shown)
        if chunk.response is not None:
            yield chunk.response


def _pending_calls(history: list[Message]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet (a resumed task)."""
    for i in range(len(history) - 1, -1, -1):
        m = history[i]
        if m.role == "assistant":
            answered = {h.tool_call_id for h in history[i + 1 :] if h.role == "tool"}
            return [c for c in m.tool_calls if c.id not in answered]
        if m.role == "user":
            return []
    return []


async def _execute(
    call: ToolCall, executor: ToolExecutor, ctx: ToolContext, recorder: TaskRecorder | None
) -> ToolResult:
    """Run one call, recorded before and after, unless a previous process already finished it.

    A call recorded as started but never as done was cut off by a crash at an unknown point:
    it may have had its effect. It runs again only if its tool is idempotent or the user says
    so; otherwise the model is told its outcome is unknown (at most once, not at least once).
    """
    if recorder is not None:
        done = recorder.completed(call.id)
        if done is not None:
            return done  # completed before a crash: never run twice
        if recorder.started(call.id):
            tool = executor.tools.get(call.name)
            if tool is None or not tool.idempotent:
                if not _rerun_confirmed(call, ctx):
                    result = _unknown_outcome(call)
                    recorder.call_done(result)
                    return result
        recorder.call_started(call)
    tool = executor.tools.get(call.name)
    waits = tool is not None and tool.interactive
    if recorder is not None and waits:
        recorder.status("waiting_user")
    result = await executor.run(call, ctx)
    if recorder is not None:
        if waits:
            recorder.status("running")
        recorder.call_done(result)
    return result


async def run_loop(
    engine: Engine,
    executor: ToolExecutor,
    history: list[Message],
    ctx: ToolContext,
    settings: LoopSettings,
    recorder: TaskRecorder | None = None,
) -> AsyncIterator[Event]:
    """Run one user turn to completion. ``history`` ends with the user's message (or, when a
    task is resumed, wherever its checkpoint left it) and is extended in place with the
    assistant's messages and tool results. With a ``recorder`` every step is checkpointed."""
    run_id = ctx.run_id or "run_" + secrets.token_hex(6)
    ctx.run_id = run_id
    started = time.perf_counter()
    yield RunStarted(run_id=run_id, model=engine.name, track=settings.track)
    tools = executor.visible()
    known = tool_names(tools)
    if settings.track == "protocol" and has_reply(tools):
        known[REPLY_TOOL] = ["text"]  # parsed like a tool: its text is the answer
    guard = LoopGuard()
    usage = Usage()
    completed: dict[str, ToolResult] = {}  # call hash → result, this run
    answer_mode = False
    if recorder is not None:
        recorder.status("running")
    for call in _pending_calls(history):
        yield ToolCallStarted(call)
        t0 = time.perf_counter()
        result = await _execute(call, executor, ctx, recorder)
        completed[call_hash(call)] = result
        yield ToolCallFinished(result, _ms(t0))
        history.append(Message("tool", result.content, tool_call_id=call.id, name=call.name))
        if recorder is not None:
            recorder.checkpoint(history, ctx.state)
    counter = settings.counter or TokenCounter(engine)
    reported: list[tuple[str, str]] = []
    by_name = {t.name: t for t in tools}
    nudge = ""  # added to the request for one turn only, never stored
    nudged: set[str] = set()  # each kind of nudge is given once per run
    errors: list[tuple[str, str]] = []  # (tool, content) of failed calls, this run
    for turn in range(1, settings.max_turns + 1):
        last_turn = turn == settings.max_turns
        answer_mode = answer_mode or (last_turn and bool(tools))
        view, listed, memory, summary = history, tools, None, ""
        parts: dict[str, int] = {}
        if settings.n_ctx:
            fitted = await fit_request(
                settings, counter, ctx, history, tools, answer_mode, completed
            )
            view, listed, memory, summary = (
                fitted.history,
                fitted.tools,
                fitted.memory,
                fitted.summary,
            )
            ctx.state[CUT_KEY] = fitted.cut
            parts = dict(fitted.tokens)
            now = [(e.part, e.detail) for e in fitted.events]
            if now != reported:  # report a change, not the same cut every turn
                for event in fitted.events:
                    yield event
                reported = now
        system = system_message(
            settings,
            listed,
            ctx,
            answer_mode=answer_mode,
            memory=memory,
            summary=summary,
            history=view,
        )
        request = [system, *render_history(view, settings.track, answer_mode=answer_mode)]
        if nudge:
            request = _with_nudge(request, nudge)
            nudge = ""
        native_tools = listed if settings.track == "native" and listed and not answer_mode else None
        deltas: list[str] = []
        response: ModelResponse | None = None
        metering = settings.meter.start() if settings.meter is not None else None
        try:
            async for item in _call_engine(engine, request, native_tools, settings, deltas):
                if isinstance(item, TextDelta):
                    yield item
                else:
                    response = item
        except EngineError as exc:
            if settings.meter is not None:
                settings.meter.stop(metering)  # ends a polling thread, if any
            if recorder is not None:
                recorder.status("failed", error=str(exc))
            yield ErrorEvent(
                code=Code.ENGINE_ERROR,
                message=str(exc),
                kind=type(exc).__name__,
                status=exc.status,
                retryable=exc.retryable,
                engine=exc.engine,
                cause=exc,
            )
            yield Final("", "error", usage, _ms(started), turn)
            return
        assert response is not None
        energy_j = power_w = None
        if settings.meter is not None:
            energy_j, power_w = settings.meter.stop(metering)
        usage = usage + response.usage
        parsed = extract_calls(response, known if tools else {}, codeact=settings.codeact)
        yield _model_called(
            turn,
            engine,
            response,
            len(parsed.calls),
            repaired=parsed.repaired,
            energy_j=energy_j,
            power_w=power_w,
            failover=response.failover,
            prompt_parts=parts,
        )
        if response.failover:
            yield Notice(
                Code.FAILOVER,
                f"answered by {response.model or engine.name} after: "
                + " | ".join(response.failover),
            )
        if parsed.repaired:
            yield Notice(Code.REPAIRED, f"repaired malformed tool-call JSON ({parsed.format})")
        for warning in parsed.warnings:
            yield Notice(Code.PARSE_WARNING, warning)
        protocol = settings.track == "protocol"
        reply = take_reply(parsed.calls, tools) if protocol else None
        if reply is not None and all(c.name not in by_name for c in parsed.calls):
            parsed.calls, parsed.text = [], reply
        wanted = [c for c in parsed.calls if reply is None or c.name.casefold() != REPLY_TOOL]
        prepared = prepare(wanted, by_name, call_hash)
        if prepared.changes:
            yield Notice(Code.COERCED, "; ".join(prepared.changes))
        if prepared.invented:
            shown = ", ".join(c.name for c in prepared.invented)
            yield Notice(Code.INVENTED_TOOL, f"not run: no tool named {shown}")
            if "invented" not in nudged and not last_turn:
                # Code decides: a tool that does not exist is never run. Ask once, in the
                # model's own terms, for the answer or the listed tool it meant.
                nudged.add("invented")
                name = prepared.invented[0].name
                nudge = invented_nudge(name, list(by_name))
                continue
            if not prepared.calls and not answer_mode and not last_turn:
                # Asked once already: withhold the tools and ask for the answer itself.
                answer_mode = True
                continue
        calls = prepared.calls
        if not calls:
            answer = clean_answer(parsed.text)
            if prepared.invented and not answer.strip():
                names = ", ".join(c.name for c in prepared.invented)
                answer = f"I have no tool for that: {names} is not one of my tools."
            review = review_answer(
                answer,
                tools=list(by_name),
                results=[r.content for r in completed.values() if r.ok],
                errors=errors,
                nudged=nudged,
                protocol=protocol,
                answer_mode=answer_mode,
                last_turn=last_turn,
            )
            if isinstance(review, Correction):
                nudged.add(review.kind)
                yield Notice(review.code, review.message)
                nudge = review.nudge
                continue
            answer = review
            history.append(Message("assistant", answer))
            _finish(recorder, history, ctx, "succeeded", answer)
            yield Final(answer, "answer", usage, _ms(started), turn)
            return
        if protocol and settings.relevance is not None and not completed and not last_turn:
            # Code decides: a first call to a tool unrelated to the request (get_weather for
            # "which planet is closest to the sun?") is not run; the model answers without tools.
            verdicts = settings.relevance.judge(
                _last_requests(history),
                [(by_name[c.name], c.arguments) for c in calls],
                _grounding_text(history, ctx),
            )
            calls, correction = review_first_calls(calls, verdicts, settings.relevance, nudged)
            if correction is not None:
                yield Notice(correction.code, correction.message)
                if not calls:  # none runs this turn
                    if correction.kind:
                        nudged.add(correction.kind)
                    nudge = correction.nudge
                    answer_mode = answer_mode or correction.answer_mode
                    continue
        if (
            protocol
            and not completed
            and not nudged
            and not last_turn
            and len(calls) == 1
            and names_several(_last_requests(history, 1)[0] if history else "")
        ):
            # Small models call for the first item of "Porto and Faro" and then invent the
            # second's answer. Ask once, before anything runs, for the calls the request needs;
            # only new calls whose values the conversation holds are added.
            nudged.add("more")
            asked = [
                *request,
                Message("assistant", response.content),
                Message("user", MORE_CALLS_NUDGE),
            ]
            try:
                more = await engine.generate(asked, None, **settings.params)
            except EngineError as exc:
                yield Notice(Code.MORE_CALLS, f"could not ask for more calls: {exc}")
            else:
                usage = usage + more.usage
                found = extract_calls(more, known, codeact=settings.codeact).calls
                extra = more_calls(calls, found, by_name, call_hash, _grounding_text(history, ctx))
                yield _model_called(turn, engine, more, len(extra))
                if extra:
                    shown = ", ".join(call_text(c.name, c.arguments) for c in extra)
                    yield Notice(
                        Code.MORE_CALLS, f"asked once for the calls the request needs: {shown}"
                    )
                    calls = [*calls, *extra]
        parsed.calls = calls
        repeats = [c for c in parsed.calls if call_hash(c) in completed]
        if repeats:
            # The result is already known: small models re-issue a finished call instead of
            # answering. Code decides: don't run it again; ask for the answer with tools withheld.
            shown = call_text(repeats[0].name, repeats[0].arguments)
            if answer_mode:
                last = completed[call_hash(repeats[0])]
                text = f"{shown} returned: {last.content}"
                history.append(Message("assistant", text))
                _finish(recorder, history, ctx, "failed", text)
                yield Notice(
                    Code.REPEATED_CALL, f"the model kept repeating {shown}; showing its result"
                )
                yield Final(text, "loop", usage, _ms(started), turn)
                return
            yield Notice(
                Code.REPEATED_CALL, f"{shown} already ran; asking for the answer without tools"
            )
            answer_mode = True
            continue
        if last_turn:
            names = ", ".join(c.name for c in parsed.calls)
            history.append(Message("assistant", parsed.text))
            _finish(recorder, history, ctx, "failed", f"max_turns: still calling {names}")
            yield Notice(
                Code.MAX_TURNS, f"stopped after {turn} turns; the model still wanted: {names}"
            )
            yield Final(
                f"I stopped after {turn} turns (max_turns) without a final answer; "
                f"the model still wanted to call {names}.",
                "max_turns",
                usage,
                _ms(started),
                turn,
            )
            return
        answer_mode = False
        parsed.calls = _unique_ids(parsed.calls, history)
        history.append(Message("assistant", parsed.text, tool_calls=list(parsed.calls)))
        if recorder is not None:
            recorder.checkpoint(history, ctx.state)
        failed = False
        for call in parsed.calls:
            yield ToolCallStarted(call)
            t0 = time.perf_counter()
            if failed:
                result = _skipped(call)
            elif (reason := guard.check(call)) is not None:
                result = _blocked(call, reason)
                yield Notice(Code.LOOP_BLOCKED, reason)
                answer_mode = True
            else:
                result = await _execute(call, executor, ctx, recorder)
                completed[call_hash(call)] = result
            yield ToolCallFinished(result, _ms(t0))
            history.append(Message("tool", result.content, tool_call_id=call.id, name=call.name))
            if recorder is not None:
                recorder.checkpoint(history, ctx.state)
            failed = failed or not result.ok
            if not result.ok:
                errors.append((call.name, result.content))
    raise AssertionError("unreachable: the last turn always returns")  # pragma: no cover


async def fit_request(
    settings: LoopSettings,
    counter: TokenCounter,
    ctx: ToolContext,
    history: list[Message],
    tools: Sequence[Tool],
    answer_mode: bool,
    completed: dict[str, ToolResult],
) -> Any:
    assert settings.n_ctx is not None
    base = settings.system_prompt + (f"\n\n{answer_mode_note(history)}" if answer_mode else "")
    checkpoint = ctx.state.get(CHECKPOINT_KEY)
    if checkpoint:
        base += f"\n\nYour working checkpoint (your own notes on this task):\n{checkpoint}"

    def listing(ts: Sequence[Tool]) -> str:
        if settings.track == "protocol":
            return protocol_system_prompt("", ts)
        return json.dumps([t.openai_schema() for t in ts])

    return await fit(
        counter=counter,
        n_ctx=settings.n_ctx,
        reserve=settings.reserve,
        system=base,
        history=history,
        memory=MemoryParts.from_state(ctx.state.get(MEMORY_KEY)),
        tools=[] if answer_mode else list(tools),
        listing=listing,
        used_tools={r.name for r in completed.values()},
        cut=int(ctx.state.get(CUT_KEY, 0)),
    )


def _finish(
    recorder: TaskRecorder | None,
    history: list[Message],
    ctx: ToolContext,
    status: Status,
    text: str,
) -> None:
    if recorder is not None:
        recorder.store.checkpoint(recorder.task_id, history, ctx.state)
        recorder.status(status, result=text)


def _unique_ids(calls: list[ToolCall], history: list[Message]) -> list[ToolCall]:
    """Calls with ids not used before in this task: endpoints that omit ids get ``call_0`` from
    the client every turn, and a reused id would be answered with the earlier call's result."""
    seen = {c.id for m in history for c in m.tool_calls}
    unique = []
    for call in calls:
        if not call.id or call.id in seen:
            call = dataclasses.replace(call, id="call_" + secrets.token_hex(6))
        seen.add(call.id)
        unique.append(call)
    return unique


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
