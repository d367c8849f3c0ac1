"""The agent loop (A1, A2, A3): an async generator of typed events.

Code controls execution; the model only decides. Each turn: build the prompt, call the engine,
extract tool calls (native or protocol track), check them with the loop guard, run them through
the executor, feed results back marked as data. Nothing here prints: the CLI, the server and the
tests all consume the same event stream.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from lar.agents.answers import for_user, how_to_allow, in_request_language, notices, stopped_answer
from lar.agents.budget import BudgetSpent, Spent, budget_answer
from lar.agents.calls import (
    blocked,
    change_nothing,
    execute,
    finish_task,
    pending_calls,
    skipped,
    unique_ids,
    unlisted,
)
from lar.agents.context import TokenCounter, render_memory
from lar.agents.guard import LoopGuard, call_hash
from lar.agents.policy import Finish, Hook, Retry, RunState, Turn, Verdict, WithholdTools, apply
from lar.agents.prompting import Prompter
from lar.agents.replies import (
    call_engine,
    engine_error,
    model_called,
    parse_notices,
    shown_answer,
    written_calls,
)
from lar.agents.request import (
    DEFAULT_SYSTEM_PROMPT,
    Carried,
    LoopSettings,
    Track,
    fit_request,
    render_history,
    system_message,
)
from lar.agents.state import Status, TaskRecorder
from lar.calling.constrained import parse_constrained, response_format
from lar.calling.corrections import prepare
from lar.calling.native import extract_calls
from lar.calling.prompt import (
    REPLY_TOOL,
    call_text,
    has_reply,
    take_reply,
    tool_listing,
    tool_reminder,
)
from lar.calling.protocol import KnownTools, ParseResult
from lar.engines.base import Engine
from lar.errors import EngineError
from lar.tools.base import ToolContext, held_back
from lar.tools.executor import ToolExecutor, offered_for, tool_names
from lar.types import (
    Code,
    ErrorEvent,
    Event,
    Final,
    Message,
    ModelResponse,
    Notice,
    RunStarted,
    TextDelta,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolResult,
)

__all__ = [
    "LoopSettings",
    "Track",
    "run_loop",
    "DEFAULT_SYSTEM_PROMPT",
    "Carried",
    "system_message",
    "render_history",
    "fit_request",
]


async def run_loop(
    engine: Engine,
    executor: ToolExecutor,
    history: list[Message],
    ctx: ToolContext,
    settings: LoopSettings,
    recorder: TaskRecorder | None = None,
    carried: Carried | None = None,
) -> AsyncIterator[Event]:
    """Run one user turn to completion. ``history`` ends with the user's message (or, when a
    task is resumed, wherever its checkpoint left it) and is extended in place with the
    assistant's messages and tool results. With a ``recorder`` every step is checkpointed.

    Each turn: one model call, then the policies' hooks (lar.agents.policy), then the calls."""
    run = RunState(ctx.run_id or "run_" + secrets.token_hex(6), settings.max_turns)
    ctx.run_id = run.run_id
    yield RunStarted(run_id=run.run_id, model=engine.name, track=settings.track)
    me = _Loop(engine, executor, history, ctx, settings, recorder, run, carried or Carried())
    if recorder is not None:
        recorder.status("running")
    async for event in me.resume():
        yield event
    for n in range(1, settings.max_turns + 1):
        run.turn = n
        run.answer_mode = run.answer_mode or (run.last_turn and bool(me.tools))
        turn = me.new_turn()
        me.spent = me.spent or settings.budget.check(run.usage, me.started)
        if me.spent is None:
            async for event in me.call_model(turn):
                yield event
        if me.spent is not None:
            async for event in me.stop_spent(me.spent):
                yield event
            return
        if me.failed is not None:
            yield me.failed
            yield me.final("", "error")
            return
        async for event in me.decide(turn):
            yield event
        if me.ended:
            return
        if me.spent is not None:
            async for event in me.stop_spent(me.spent):
                yield event
            return
    raise AssertionError("unreachable: the last turn always returns")  # pragma: no cover


def _too_long(exc: EngineError) -> bool:
    """A 400 for a request over the context window (llama.cpp: "exceeds the available context
    size"; OpenAI: "maximum context length"), not for the schema."""
    return "context" in str(exc).casefold()


def _next_turn(verdict: Verdict, run: RunState) -> bool:
    """Act on a verdict that ends this turn early; False when the turn goes on."""
    if isinstance(verdict, Retry):
        run.nudge = verdict.nudge
        return True
    if isinstance(verdict, WithholdTools):
        run.answer_mode = True
        return True
    return False


class _Loop:
    """The steps of one run, over its typed state (``RunState``)."""

    def __init__(
        self,
        engine: Engine,
        executor: ToolExecutor,
        history: list[Message],
        ctx: ToolContext,
        settings: LoopSettings,
        recorder: TaskRecorder | None,
        run: RunState,
        carried: Carried,
    ) -> None:
        self.engine, self.executor, self.history, self.ctx = engine, executor, history, ctx
        self.settings, self.recorder, self.run, self.carried = settings, recorder, run, carried
        self.started = time.perf_counter()
        asked = next((m.content for m in reversed(history) if m.role == "user"), "")
        visible = executor.visible()
        self.tools = offered_for(visible, asked)
        self.held = {t.name: t for t in visible if t.offered is held_back}  # run when called
        self.by_name = {t.name: t for t in self.tools}
        self.known = tool_names(self.tools)
        if settings.track == "protocol" and has_reply(self.tools):
            self.known[REPLY_TOOL] = ["text"]  # parsed like a tool: its text is the answer
        self.policies = settings.policies
        self.guard = LoopGuard()
        self.counter = settings.counter or TokenCounter(engine)
        self.prompter = Prompter(settings, self.counter, ctx, history, self.tools, carried)
        self.events: list[Event] = []  # said by policies and their model calls
        self.failed: ErrorEvent | None = None
        self.spent: Spent | None = None
        self.ended = False
        self.unconstrained = False  # the endpoint refused JSON Schema decoding once
        self.cut_off = False  # this turn's calls were cut off at max_tokens
        self.sent: list[str] = []  # every text the model was sent in this run
        self.reads = [t.name for t in self.tools if t.idempotent or t.interactive]
        self.harmless = {t.name for t in self.tools if t.harmless}

    def new_turn(self) -> Turn:
        memory = render_memory(self.carried.memory) if self.carried.memory else ""
        return Turn(
            self.run,
            self.settings.track,
            self.by_name,
            list(self.history),
            memory=memory,
            recalled=[line for line, _ in getattr(self.carried.memory, "recalled", [])],
            relevance=self.settings.relevance,
            held=self.held,
            workspace=self.ctx.workspace,
            key=call_hash,
            asker=self.ask,
        )

    def final(self, text: str, reason: Any) -> Final:
        return Final(text, reason, self.run.usage, _ms(self.started), self.run.turn)

    def drain(self) -> list[Event]:
        out, self.events = self.events, []
        return out

    async def consult(self, hook: Hook, turn: Turn) -> Verdict:
        if hook == "reply" and self.cut_off and not turn.run.last_turn:
            self.cut_off = False  # the answer, without tools (the calls would be cut again)
            return WithholdTools(Code.CUT_CALL, "asking for the answer without tools")
        verdict, said = await apply(hook, self.policies, turn)
        self.events.extend(said)
        return verdict

    async def decide(self, turn: Turn) -> AsyncIterator[Event]:
        """What a reply leads to, as the policies judge it: another turn, the answer, or its
        calls run. Sets ``ended`` when the run is over."""
        run = self.run
        for hook in ("reply", "calls"):
            if hook == "calls" and not turn.calls:
                break
            verdict = await self.consult(hook, turn)
            for event in self.drain():
                yield event
            if isinstance(verdict, Finish):
                async for event in self.finish(verdict.answer, verdict.reason):
                    yield event
                return
            if _next_turn(verdict, run):
                return
        if not turn.calls:
            turn.text = shown_answer(turn.text, self.history)  # judged as the user reads it
            verdict = await self.consult("answer", turn)
            for event in self.drain():
                yield event
            if _next_turn(verdict, run):
                return
            answer = verdict.answer if isinstance(verdict, Finish) else turn.text
            async for event in self.finish(answer, "answer"):
                yield event
            return
        if run.last_turn:
            async for event in self.out_of_turns(turn):
                yield event
            return
        run.answer_mode = False
        async for event in self.calls_and_results(turn):
            yield event

    async def calls_and_results(self, turn: Turn) -> AsyncIterator[Event]:
        async for event in self.run_calls(turn):
            yield event
        if {r.error.code if r.error else None for r in turn.results} == {Code.NOT_POSSIBLE}:
            # Nothing here can do it (a reminder, no scheduler): the tools' account answers.
            verdict: Verdict = Finish(Code.NOT_POSSIBLE, "the tools' account answers")
        else:
            verdict = await self.consult("results", turn)
            for event in self.drain():
                yield event
        if isinstance(verdict, Finish):
            async for event in self.finish(verdict.answer, verdict.reason):
                yield event
            return
        _next_turn(verdict, self.run)

    async def resume(self) -> AsyncIterator[Event]:
        """Run the calls a crash left without a result (a resumed task)."""
        for call in pending_calls(self.history):
            yield ToolCallStarted(call)
            t0 = time.perf_counter()
            result = await execute(call, self.executor, self.ctx, self.recorder)
            self.run.completed[call_hash(call)] = result
            yield ToolCallFinished(result, _ms(t0))
            self._record(call, result)

    def _record(self, call: ToolCall, result: ToolResult) -> None:
        self.history.append(
            Message(
                "tool", result.content, tool_call_id=call.id, name=call.name, failed=not result.ok
            )
        )
        if self.recorder is not None:
            self.recorder.checkpoint(self.history, self.ctx.state)

    async def call_model(self, turn: Turn) -> AsyncIterator[Event]:
        """This turn's model call: its events, and ``turn`` filled with the reply's calls."""
        settings, run = self.settings, self.run
        async for item in self.prompter.request(run):
            if isinstance(item, list):
                request, listed, parts = item
            else:
                yield item
        turn.request = request
        self.sent.extend(m.content for m in request)
        tools_on = bool(listed) and not run.answer_mode
        native = listed if settings.track == "native" and tools_on else None
        constrain = settings.track == "constrained" and tools_on and not self.unconstrained
        extra = {"response_format": response_format(listed)} if constrain else {}
        deltas: list[str] = []
        response: ModelResponse | None = None
        budget = settings.budget
        limits = {
            "max_tokens": budget.max_tokens(run.usage, settings.params.get("max_tokens")),
            "deadline_s": budget.left_s(self.started),
        }
        metering = settings.meter.start() if settings.meter is not None else None
        for attempt in (extra, {}) if extra else (extra,):
            try:
                async for chunk in call_engine(
                    self.engine, request, native, settings, deltas, attempt, limits
                ):
                    if isinstance(chunk, TextDelta):
                        yield chunk
                    else:
                        response = chunk
                break
            except BudgetSpent:
                if settings.meter is not None:
                    settings.meter.stop(metering)
                self.spent = budget.check(run.usage, self.started) or Spent(
                    "time_budget", budget.seconds or 0.0, time.perf_counter() - self.started
                )
                return
            except EngineError as exc:
                if attempt and exc.status == 400 and not deltas and not _too_long(exc):
                    # The endpoint cannot take the schema: the text parser reads the reply.
                    self.unconstrained = True
                    yield Notice(Code.UNCONSTRAINED, f"JSON Schema decoding refused ({exc})")
                    continue
                if settings.meter is not None:
                    settings.meter.stop(metering)  # ends a polling thread, if any
                if self.recorder is not None:
                    self.recorder.status("failed", error=str(exc))
                self.failed = engine_error(exc)
                return
        assert response is not None
        energy = settings.meter.stop(metering) if settings.meter is not None else (None, None)
        run.usage = run.usage + response.usage
        turn.response = response
        known = {**self.known, **tool_names([*self.held.values()])} if self.tools else {}
        if constrain:
            parsed = parse_constrained(response, known)
        else:
            parsed = extract_calls(response, known, codeact=settings.codeact)
        yield model_called(
            run.turn, self.engine, response, len(parsed.calls), repaired=parsed.repaired,
            energy_j=energy[0], power_w=energy[1], failover=response.failover, prompt_parts=parts,
        )  # fmt: skip
        for event in parse_notices(response, parsed, self.engine):
            self.cut_off = self.cut_off or event.code == Code.CUT_CALL
            yield event
        for notice in self.take_calls(turn, parsed, known):
            yield notice

    def take_calls(self, turn: Turn, parsed: ParseResult, known: KnownTools) -> Iterator[Notice]:
        """``turn`` filled with the reply's text and the calls to run (coerced; the invented
        ones apart)."""
        written = written_calls(parsed.text, known, self.history, self.harmless.__contains__)
        if not parsed.calls and written:
            shown = ", ".join(call_text(c.name, c.arguments) for c in written)
            yield Notice(Code.REPAIRED, f"the reply wrote a made-up result of {shown}: run instead")
            parsed.calls, parsed.text = written, ""
        protocol = self.settings.track == "protocol"
        reply = take_reply(parsed.calls, self.tools) if protocol else None
        if reply is not None and all(c.name not in self.by_name for c in parsed.calls):
            parsed.calls, parsed.text = [], reply
        wanted = [c for c in parsed.calls if reply is None or c.name.casefold() != REPLY_TOOL]
        yield from unlisted(wanted, self.by_name, self.known, self.held)
        prepared = prepare(wanted, self.by_name, call_hash)
        if prepared.changes:
            yield Notice(Code.COERCED, "; ".join(prepared.changes))
        if prepared.invented:
            shown = ", ".join(c.name for c in prepared.invented)
            yield Notice(Code.INVENTED_TOOL, f"not run: no tool named {shown}")
        turn.text, turn.calls, turn.invented = parsed.text, prepared.calls, prepared.invented

    async def ask(self, messages: list[Message], policy: str) -> ModelResponse | None:
        """A policy's question to the model: metered and counted like a turn's call; None when
        it would not fit the context window or the engine failed."""
        settings, run = self.settings, self.run
        if (
            settings.n_ctx
            and await self.prompter.size(messages) + settings.reserve > settings.n_ctx
        ):
            return None
        metering = settings.meter.start() if settings.meter is not None else None
        self.sent.extend(m.content for m in messages)
        try:
            response = await self.engine.generate(messages, None, **settings.params)
        except EngineError as exc:
            self.events.append(Notice(Code.ENGINE_ERROR, f"a policy's question failed: {exc}"))
            return None
        finally:
            energy = settings.meter.stop(metering) if settings.meter is not None else (None, None)
        run.usage = run.usage + response.usage
        more = {"energy_j": energy[0], "power_w": energy[1], "policy": policy}
        self.events.append(model_called(run.turn, self.engine, response, 0, **more))
        return response

    async def finish(self, answer: str, reason: Any) -> AsyncIterator[Event]:
        if reason == "answer":
            answer = await self.for_user(answer)
            for event in self.drain():
                yield event
        self.history.append(Message("assistant", answer))
        status: Status = "succeeded" if reason == "answer" else "failed"
        finish_task(self.recorder, self.history, self.ctx, status, answer)
        self.ended = True
        yield self.final(answer, reason)

    async def for_user(self, answer: str) -> str:
        """The answer as the user gets it (lar.agents.answers); its notices go to ``events``."""
        own = [self.settings.system_prompt, tool_listing(self.tools), tool_reminder(self.tools)]
        if self.carried.memory:
            own.append(render_memory(self.carried.memory))
        checked = for_user(
            answer, sent=self.sent, history=self.history, results=list(self.run.completed.values()),
            own=own, how=how_to_allow(self.executor.approver), reads=self.reads,
        )  # fmt: skip
        self.events.extend(notices(checked))
        if not self.settings.accounts_in_language:
            return checked.text
        return await in_request_language(checked, self.history, self.ask)

    async def out_of_turns(self, turn: Turn) -> AsyncIterator[Event]:
        """Calls on the last turn: run when they change nothing (the user gets what they
        found: "I stopped" hid a calculation the 1.5B had right), else the run stops here."""
        if change_nothing(turn.calls, self.tools):
            async for event in self.run_calls(turn):
                yield event
            async for event in self.finish("", "answer"):
                yield event
            return
        names = ", ".join(c.name for c in turn.calls)
        self.history.append(Message("assistant", turn.text))
        why = f"max_turns: still calling {names}"
        finish_task(self.recorder, self.history, self.ctx, "failed", why)
        n, self.ended = self.run.turn, True
        yield Notice(Code.MAX_TURNS, f"stopped after {n} turns; the model still wanted: {names}")
        results = list(self.run.completed.values())
        how = how_to_allow(self.executor.approver)
        yield self.final(stopped_answer(n, names, results, how, self.reads), "max_turns")

    async def stop_spent(self, spent: Spent) -> AsyncIterator[Event]:
        """The run ends here: a budget is spent (A2)."""
        results = list(self.run.completed.values())
        answer = budget_answer(spent, results, how_to_allow(self.executor.approver), self.reads)
        self.history.append(Message("assistant", answer))
        finish_task(self.recorder, self.history, self.ctx, "failed", spent.describe())
        self.ended = True
        yield Notice(Code.BUDGET, f"stopped: the run's {spent.describe()}")
        yield self.final(answer, spent.reason)

    async def run_calls(self, turn: Turn) -> AsyncIterator[Event]:
        """Run the turn's calls in order; after a failure the rest are skipped."""
        calls = unique_ids(turn.calls, self.history)
        self.history.append(Message("assistant", turn.text, tool_calls=list(calls)))
        if self.recorder is not None:
            self.recorder.checkpoint(self.history, self.ctx.state)
        failed = False
        for call in calls:
            yield ToolCallStarted(call)
            t0 = time.perf_counter()
            budget = self.settings.budget
            self.spent = self.spent or budget.check(self.run.usage, self.started, tokens=False)
            if failed:
                result = skipped(call)
            elif self.spent is not None:
                result = skipped(call, f"not run: the run's {self.spent.describe()}")
            elif (reason := self.guard.check(call)) is not None:
                result = blocked(call, reason)
                yield Notice(Code.LOOP_BLOCKED, reason)
            else:
                result = await execute(call, self.executor, self.ctx, self.recorder)
                self.run.completed[call_hash(call)] = result
            yield ToolCallFinished(result, _ms(t0))
            self._record(call, result)
            turn.results.append(result)
            failed = failed or not result.ok


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
