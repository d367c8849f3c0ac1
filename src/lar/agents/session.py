"""One conversation of one agent on a runner (A1, A2): its tool executor, approver, memory view
and state. Sessions of one runner run at once; each run picks its model, engine and loop settings
for itself, so nothing a run decides leaks into another session's run."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.agents.blocking import Stepper, offload
from lar.agents.context import MemoryParts
from lar.agents.kinds import RunParts, kind_named
from lar.agents.loop import (
    Carried,
    LoopSettings,
    Track,
)
from lar.agents.request import loop_settings
from lar.agents.results import PromptPreview, RunResult, failure_error, final_text
from lar.agents.state import TaskRecorder
from lar.calling.relevance import request_language_code
from lar.engines.base import Engine, exclusive_loop
from lar.errors import LarError
from lar.memory.consolidate import Consolidated, consolidate, due_sessions, end_turn, log_turn
from lar.tools.base import ToolContext
from lar.tools.builtin.interaction import CHECKPOINT_KEY
from lar.tools.executor import Approver, ToolExecutor
from lar.types import (
    Code,
    ErrorEvent,
    Event,
    ExecutedCall,
    Final,
    MemoryRecalled,
    Message,
    Notice,
    RunStarted,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
)

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.runner import Runner
    from lar.memory.agent_memory import AgentMemory
    from lar.routing import Decision

__all__ = ["Session"]


Model = tuple[Engine, Track, LoopSettings]


class Session:
    """Made by ``Runner.session(agent, …)``; ``Agent.run`` uses one of its own."""

    def __init__(
        self,
        agent: Agent,
        runner: Runner,
        *,
        session_id: str | None = None,
        workspace: str | Path | None = None,
        approver: Approver | None = None,
        ask_user: Callable[[str], str | None] | None = None,
    ) -> None:
        self.agent = agent
        self.runner = runner
        config = runner.config
        self.session_id = session_id or "s_" + secrets.token_hex(6)
        ws = workspace or config.agent.workspace
        self.workspace = Path(ws).expanduser().resolve() if ws else Path.cwd()
        self.ask_user = ask_user
        allow = list(agent.allowlist) if agent.allowlist is not None else config.tools.allowlist
        self.executor = ToolExecutor(
            agent.tools,
            allowlist=allow,
            approver=approver,
            permissions=config.tools.permissions,
            credentials={
                name: secret.get_secret_value() for name, secret in config.tools.credentials.items()
            },
        )
        self._executor_closer = weakref.finalize(self, self.executor.close)
        self.state: dict[str, Any] = {}
        """What tools keep between runs (``ToolContext.state``; the checkpoint tool's notes)."""
        self.carried = Carried()
        self.learned: Any = None
        """What the last run taught (``lar.skills.crystallize.Learned``), if anything."""
        """What the conversation carries from run to run (the interaction tool's checkpoint
        note, the prompt's memory part)."""
        self.memory: AgentMemory | None = None
        if runner.memory is not None:
            self.memory = runner.memory.for_session(self.session_id, runner.redactor.text)
        self.last_decision: Decision | None = None
        self.kind = kind_named(agent.kind or config.agent.kind)
        """How this agent's runs go (A4, lar.agents.kinds)."""
        self._models: dict[str, Model] = {}
        self._current: Model | None = None
        self._stepper = Stepper()  # the blocking iterator, interruptible

    # --- the model of a run ------------------------------------------------------------------

    def _model(self, name: str) -> Model:
        """Engine, track and loop settings of ``name`` for this session's agent."""
        if name not in self._models:
            engine = self.runner.engine(name, named=self.agent.model is not None)
            cfg = self.runner.model_config(name)
            self._models[name] = (engine, *loop_settings(self.agent, self.runner, engine, cfg))
        return self._models[name]

    def _first(self) -> Model:
        if self._current is None:
            runner = self.runner
            name = runner.fixed.name if runner.fixed else self.agent.model or runner.config.model
            self._current = self._model(name)
        return self._current

    @property
    def engine(self) -> Engine:
        """The engine of the latest run (before any: the one the first would most likely use)."""
        return self._first()[0]

    @property
    def track(self) -> Track:
        return self._first()[1]

    @property
    def settings(self) -> LoopSettings:
        return self._first()[2]

    def route(self, text: str, *, urgency: float = 0.0) -> Decision:
        """Which model answers ``text``, and why (L2, L3); nothing is called."""
        return self.runner.route(self.agent, text, urgency=urgency)

    def feedback(self, trace_id: str, score: int, comment: str | None = None) -> None:
        self.runner.feedback(trace_id, score, comment)

    # --- async API ---------------------------------------------------------------------------

    async def astream(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        stream_text: bool = True,
        urgency: float = 0.0,
        aside: bool = False,
        run_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """Events for one user message. ``history`` (if given) is extended in place.

        The router picks the model first (``urgency`` above 0.8 asks for the smallest). With a
        task store every step is checkpointed; the run id is the task id and the trace id.
        ``aside``: a side question; memory neither logs it for the conversation's summary nor
        keeps it as the last task's note. ``run_id``: the id to use (a server names the run
        before it starts).
        """
        runner = self.runner
        decision = self.route(text, urgency=urgency)
        self.last_decision = decision
        model = self._current = self._model(decision.model)
        engine = model[0]
        messages = history if history is not None else []
        messages.append(Message("user", text))
        run_id = run_id or "t_" + secrets.token_hex(6)
        trace = None
        if runner.traces is not None:
            from lar.traces import TraceRecorder

            trace = TraceRecorder(
                runner.traces,
                run_id,
                runner.redactor.text(text),
                session=self.session_id,
                info=runner.info,
                max_latency_s=runner.config.router.max_latency_s,
                max_cost_usd=runner.config.router.max_cost_usd,
                # events come masked by the agent; a memory may know secrets the agent does not
                redact=self.memory.redact if self.memory is not None else None,
            )
        recorder = lock = None
        if runner.tasks is not None:
            await offload(runner.tasks.create, run_id, text, engine.name)
            lock = await offload(runner.tasks.lock, run_id)
            recorder = TaskRecorder(runner.tasks, run_id)
        prelude: list[Event] = [decision]
        calls = 0
        if self.memory is not None:
            prelude += await self._consolidate_if_due()
            prelude += await offload(self._memory_begin, text)
            if not aside:
                await offload(log_turn, self.memory, "user", text)
        try:
            async for event in self._drive(model, messages, run_id, recorder, stream_text, prelude):
                if trace is not None:
                    trace.observe(event)
                calls += isinstance(event, ToolCallFinished)
                yield event
        finally:
            if lock is not None:
                lock.release()
            if trace is not None and not trace.done:
                trace.finish()  # interrupted: still a trace, outcome "interrupted"
        if self.memory is not None and not aside:
            note = self.state.get(CHECKPOINT_KEY, "")
            await offload(end_turn, self.memory, text, final_text(messages), note)
        if trace is not None and calls >= runner.config.skills.learn_min_calls:
            self.learned = await offload(runner.learn, run_id)  # a skill drafted (K5)

    async def _summarize(self, prompt: str) -> str:
        response = await self.engine.generate(
            [Message("user", prompt)], None, max_tokens=256, temperature=0.0
        )
        return response.content

    async def _consolidate_if_due(self) -> list[Event]:
        """This session, once idle 5 minutes or at 20 open turns (M5)."""
        assert self.memory is not None
        if self.memory.session_id not in await offload(due_sessions, self.memory):
            return []
        done = await consolidate(
            self.memory, self.memory.session_id, self._summarize, self.memory.files
        )
        if done is None:
            return []
        return [
            Notice(
                Code.CONSOLIDATED,
                f"memory: consolidated {done.turns} turns ({len(done.facts)} facts)",
            )
        ]

    async def aconsolidate(self, *, force: bool = False) -> list[Consolidated]:
        """Consolidate every session that is due (all open ones with ``force``)."""
        if self.memory is None:
            return []
        done = []
        for sid in due_sessions(self.memory, force=force):
            result = await consolidate(self.memory, sid, self._summarize, self.memory.files)
            if result is not None:
                done.append(result)
        self.memory.sync_files()
        return done

    def consolidate(self, *, force: bool = False) -> list[Consolidated]:
        """Blocking ``aconsolidate``."""
        return self.runner.event_loop().run_until_complete(self.aconsolidate(force=force))

    def _memory_begin(self, text: str, *, write: bool = True) -> list[Event]:
        """Recall for the message, store its statements, and set the prompt's memory part."""
        assert self.memory is not None
        t0 = time.perf_counter()
        recalled = self.memory.begin(text, log_it=write)
        took = (time.perf_counter() - t0) * 1000
        events: list[Event] = [MemoryRecalled(text, [r.as_log() for r in recalled], took)]
        if write:
            events += self.memory.observe_user(text)
        self.carried.memory = MemoryParts(
            self.memory.index_lines(),
            [(self.memory.line(r), r.score) for r in recalled],
            self.memory.working(text),
        )
        return events

    async def apreview(
        self, text: str, *, history: list[Message] | None = None, estimate: bool = False
    ) -> PromptPreview:
        """The prompt the model would get for ``text`` now, its parts' tokens and limits.

        Nothing is stored: no memory is written and the recall is not logged. ``estimate``
        counts 3.5 characters a token instead of asking the model's tokenizer.
        """
        from lar.agents.prompting import preview

        if self.memory is not None:
            self._memory_begin(text, write=False)
        return await preview(self, text, history or [], estimate)

    def preview(
        self, text: str, *, history: list[Message] | None = None, estimate: bool = False
    ) -> PromptPreview:
        """Blocking ``apreview``."""
        return self.runner.event_loop().run_until_complete(
            self.apreview(text, history=history, estimate=estimate)
        )

    async def aresume(self, task_id: str, *, stream_text: bool = True) -> AsyncIterator[Event]:
        """Continue a task from its last checkpoint; completed tool calls are not run again."""
        tasks = self.runner.tasks
        if tasks is None:
            raise LarError("resuming needs a task store: Runner(tasks=TaskStore(...))")
        tasks.get(task_id)  # TaskNotFound before anything else
        lock = tasks.lock(task_id)  # TaskBusy while another process runs it
        try:
            record = tasks.get(task_id)  # as it is now that no one else can change it
            if record.status in ("succeeded", "failed"):
                why = record.result or record.error or "no answer was recorded"
                raise LarError(f"task {task_id} already ended ({record.status}): {why}")
            history, state = tasks.load_checkpoint(task_id)
            self.carried.resume(state)
            self.state.update(state)
            recorder = TaskRecorder(tasks, task_id)
            async for event in self._drive(self._first(), history, task_id, recorder, stream_text):
                yield event
        finally:
            lock.release()

    async def _drive(
        self,
        model: Model,
        messages: list[Message],
        run_id: str,
        recorder: TaskRecorder | None,
        stream_text: bool,
        prelude: list[Event] | None = None,
    ) -> AsyncIterator[Event]:
        engine, _, settings = model
        runner = self.runner
        ctx = ToolContext(
            workspace=self.workspace,
            home=runner.config.home,
            run_id=run_id,
            state=self.state,
            ask_user=self.ask_user,
            sandbox=runner.config.tools.sandbox,
            memory=self.memory,
            redact=runner.redactor.text,
            timezone=runner.config.scheduler.timezone,
            language=request_language_code(
                next((m.content for m in reversed(messages) if m.role == "user"), "")
            ),
        )
        if settings.stream != stream_text:
            settings = dataclasses.replace(settings, stream=stream_text)
        ended = False
        try:
            parts = RunParts(
                self, engine, self.executor, messages, ctx, settings, recorder, self.carried
            )
            async for event in self.kind.run(parts):
                if isinstance(event, Final):
                    ended = True
                if self.memory is not None and isinstance(event, ToolCallFinished):
                    used = self.executor.tools.get(event.result.name)
                    outside = used is None or used.reads_outside
                    self.memory.note_result(event.result.ok, event.result.content, outside=outside)
                yield runner.redactor.event(event)
                if isinstance(event, RunStarted):
                    for extra in prelude or ():
                        yield runner.redactor.event(extra)
        except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
            # Stopped from outside (Ctrl-C, SIGTERM, a consumer that stopped reading): the
            # task stays resumable; what ran is checkpointed already.
            if recorder is not None and not ended:
                recorder.status("interrupted", error="interrupted")
            raise

    async def arun(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        urgency: float = 0.0,
        run_id: str | None = None,
    ) -> RunResult:
        events: list[Event] = []
        calls: dict[str, ToolCall] = {}
        executed: list[ExecutedCall] = []
        final: Final | None = None
        error: str | None = None
        failure: ErrorEvent | None = None
        stream = self.astream(
            text, history=history, stream_text=False, urgency=urgency, run_id=run_id
        )
        run_id = ""
        async for event in stream:
            events.append(event)
            if isinstance(event, RunStarted):
                run_id = event.run_id
            if isinstance(event, ToolCallStarted):
                calls[event.call.id] = event.call
            elif isinstance(event, ToolCallFinished):
                r = event.result
                call = calls.get(r.call_id)
                if call is not None and r.ran:
                    value = r.value if r.ok else r.content
                    executed.append(
                        ExecutedCall(call.name, call.arguments, value, ok=r.ok, error=r.error)
                    )
            elif isinstance(event, ErrorEvent):
                error, failure = event.message, event
            elif isinstance(event, Final):
                final = event
        assert final is not None
        if final.stop_reason == "error":
            raise failure_error(failure, self.engine.name)
        return RunResult(
            text=final.text,
            tool_calls=executed,
            stop_reason=final.stop_reason,
            usage=final.usage,
            latency_ms=final.latency_ms,
            turns=final.turns,
            events=events,
            error=error,
            failure=failure,
            run_id=run_id,
        )

    # --- sync API ----------------------------------------------------------------------------

    def run(
        self, text: str, *, history: list[Message] | None = None, urgency: float = 0.0
    ) -> RunResult:
        """Run to a final answer (blocking)."""
        loop = self.runner.event_loop()
        return loop.run_until_complete(self._run_exclusive(text, history, urgency))

    async def _run_exclusive(
        self, text: str, history: list[Message] | None, urgency: float
    ) -> RunResult:
        # This run is the only thing on the runner's private loop: engines may block it.
        token = exclusive_loop.set(True)
        try:
            return await self.arun(text, history=history, urgency=urgency)
        finally:
            exclusive_loop.reset(token)

    def stream(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        urgency: float = 0.0,
        aside: bool = False,
    ) -> Iterator[Event]:
        """Events as they happen (blocking iterator), text deltas included."""
        return self._iterate(self.astream(text, history=history, urgency=urgency, aside=aside))

    def reset(self) -> None:
        """A fresh start for the conversation: the run state and the last task's note go (the
        caller clears its history; memories stay)."""
        self.state.clear()
        if self.memory is not None:
            self.memory.clear_working()

    def resume(self, task_id: str) -> Iterator[Event]:
        """Events of a resumed task (blocking iterator)."""
        return self._iterate(self.aresume(task_id))

    def _iterate(self, agen: AsyncIterator[Event]) -> Iterator[Event]:
        return self._stepper.iterate(self.runner.event_loop(), agen)

    def interrupt(self) -> None:
        """Stop the run in progress at its next await: safe from a signal handler or a thread.

        The task is left ``interrupted`` (resumable with ``lar resume``) and the blocking
        iterator raises :class:`RunInterrupted`. Running sandbox processes are killed.
        """
        self._stepper.interrupt()

    def close(self) -> None:
        """Release the session's tool threads (the runner keeps engines and stores)."""
        self._executor_closer()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
