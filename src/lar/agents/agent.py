"""The Python API (I6): ``Agent(tools=[add]).run("What is 1234 + 4321?")``."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lar.agents.context import PER_MESSAGE, MemoryParts, TokenCounter
from lar.agents.loop import (
    DEFAULT_SYSTEM_PROMPT,
    MEMORY_KEY,
    LoopSettings,
    Track,
    fit_request,
    render_history,
    run_loop,
    system_message,
)
from lar.agents.state import TaskRecorder, TaskStore
from lar.calling.relevance import Relevance
from lar.config import LarConfig, ModelConfig, load_config
from lar.engines.base import Engine, exclusive_loop
from lar.engines.catalog import ModelInfo, describe, lookup
from lar.engines.factory import build_engine
from lar.errors import EngineError, LarError, RunInterrupted
from lar.memory.agent_memory import AgentMemory
from lar.memory.consolidate import Consolidated, consolidate, due_sessions, log_turn
from lar.redact import Redactor
from lar.routing import Decision, RouteContext, RouterPolicy
from lar.routing.make import make_router
from lar.telemetry.records import default_meter
from lar.tools.base import Tool, ToolContext
from lar.tools.builtin.interaction import CHECKPOINT_KEY
from lar.tools.executor import Approver, ToolExecutor
from lar.traces import TraceRecorder, TraceStore
from lar.types import (
    ContextCompressed,
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
    Usage,
)

__all__ = ["Agent", "RunResult", "PromptPreview", "resolve_track"]

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class RunResult:
    text: str
    tool_calls: list[ExecutedCall]
    stop_reason: str
    usage: Usage
    latency_ms: float
    turns: int
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    failure: ErrorEvent | None = None
    """The failure with its type and fields (status, retryable, engine, tool), if any."""
    run_id: str = ""
    """The task and trace id (``lar trace show ID``, ``agent.feedback(ID, +1)``)."""


@dataclass(slots=True)
class PromptPreview:
    messages: list[Message]
    tokens: dict[str, int]  # system, history, memory, tools
    limits: dict[str, int]
    total: int
    n_ctx: int
    reserve: int
    exact: bool  # counted by the model's tokenizer (else estimated)
    events: list[ContextCompressed]


def _failure_error(failure: ErrorEvent | None, engine: str) -> LarError:
    """The typed exception for a failed run, chained from its cause where this process has it."""
    if failure is None:
        return EngineError(engine, "the run failed")
    if failure.kind == "EngineError" or failure.code == "engine_error":
        error: LarError = EngineError(
            failure.engine or engine,
            failure.message.removeprefix(f"{failure.engine}: "),
            status=failure.status,
            retryable=failure.retryable,
        )
    else:
        error = LarError(failure.message)
    error.__cause__ = failure.cause
    return error


def resolve_track(engine: Engine, requested: str | None) -> Track:
    """Explicit choice, else the catalog's word, else protocol for local GGUF, native for APIs."""
    if requested in ("native", "protocol"):
        return requested  # type: ignore[return-value]
    info = lookup(engine.name) or lookup(engine.model)
    if info is not None:
        return "native" if info.native_tools else "protocol"
    return "protocol" if engine.kind in ("llamacpp", "scripted") else "native"


class Agent:
    """An agent with tools. Keyword-only; every argument is optional.

    ``model`` names a configured model (``$LAR_HOME/config.yaml``) or, with ``base_url``, the
    model an OpenAI-compatible endpoint serves. With neither, the embedded default model runs.
    """

    def __init__(
        self,
        *,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        engine: Engine | None = None,
        config: LarConfig | None = None,
        track: Literal["auto", "native", "protocol"] | None = None,
        max_turns: int | None = None,
        system_prompt: str | None = None,
        workspace: str | Path | None = None,
        allowlist: Iterable[str] | None = None,
        approver: Approver | None = None,
        ask_user: Callable[[str], str | None] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        on_model_progress: Progress | None = None,
        tasks: TaskStore | None = None,
        memory: AgentMemory | bool = False,
        session_id: str | None = None,
        n_ctx: int | None = None,
        traces: TraceStore | bool = True,
    ) -> None:
        from lar.tools.base import tool as make_tool

        self.config = config or load_config()
        self.tools = [t if isinstance(t, Tool) else make_tool(t) for t in tools]
        self._progress = on_model_progress
        self._track_arg = track
        self._n_ctx_arg = n_ctx
        self._max_turns = max_turns
        self._system_prompt = system_prompt
        self._params: dict[str, Any] = {}
        if temperature is not None:
            self._params["temperature"] = temperature
        if max_tokens is not None:
            self._params["max_tokens"] = max_tokens
        self._models: dict[str, tuple[Engine, Track, LoopSettings]] = {}
        self._meter = default_meter()
        if engine is None and base_url is not None:
            from lar.engines.openai_http import OpenAIEngine

            engine = OpenAIEngine(base_url=base_url, model=model or "default", api_key=api_key)
        self._fixed: str | None
        if engine is not None:
            # The caller chose the engine: every request goes to it.
            self.router: RouterPolicy | None = None
            self._fixed = engine.name
            named = model or self.config.model
            known = named in [*(m.name for m in self.config.models), "default"]
            cfg = self.config.model_named(named) if base_url is None and known else None
            self._models[engine.name] = self._prepare(engine, cfg)
        else:
            self._fixed = model  # None: the router picks among the configured models
            self.router = None if model is not None else make_router(self.config)
        self._infos = {
            n: describe(self.config.model_named(n))
            for n in [*self.config.candidates(), *([model] if model and engine is None else [])]
        }
        first = self._fixed or self.config.model
        self.engine, self.track, self.settings = self._model(first)
        allow = list(allowlist) if allowlist is not None else self.config.tools.allowlist
        self.executor = ToolExecutor(
            self.tools,
            allowlist=allow,
            approver=approver,
            permissions=self.config.tools.permissions,
            credentials={
                name: secret.get_secret_value()
                for name, secret in self.config.tools.credentials.items()
            },
        )
        if traces is True:
            traces = TraceStore(self.config.home / "lar.db")
        self.traces: TraceStore | None = traces or None
        self.last_decision: Decision | None = None
        ws = workspace or self.config.agent.workspace
        self.workspace = Path(ws).expanduser().resolve() if ws else Path.cwd()
        self.ask_user = ask_user
        self.state: dict[str, Any] = {}
        self.tasks = tasks
        self.session_id = session_id or "s_" + secrets.token_hex(6)
        if memory is True:
            from lar.memory import open_memory

            memory = open_memory(self.config)
        self.memory: AgentMemory | None = memory or None
        self.redactor = Redactor([*self.config.secrets(), *([api_key] if api_key else [])])
        if self.memory is not None:
            self.memory.session_id = self.session_id
            own, agent_mask = self.memory.redact, self.redactor.text
            self.memory.redact = lambda text: agent_mask(own(text))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._step: asyncio.Task[Event] | None = None  # the step of the blocking iterator
        self._interrupted = False
        self._run_id = ""

    # --- models and routing ---------------------------------------------------------------

    def _prepare(
        self, engine: Engine, cfg: ModelConfig | None
    ) -> tuple[Engine, Track, LoopSettings]:
        track_arg = self._track_arg
        cfg_track = cfg.track if cfg else None
        track = resolve_track(engine, track_arg if track_arg not in (None, "auto") else cfg_track)
        reserve = self._params.get("max_tokens") or (cfg.max_tokens if cfg else 512)
        settings = LoopSettings(
            track=track,
            max_turns=self._max_turns or self.config.agent.max_turns,
            system_prompt=self._system_prompt
            or self.config.agent.system_prompt
            or DEFAULT_SYSTEM_PROMPT,
            params=dict(self._params),
            n_ctx=self._n_ctx_arg or engine.context_size,
            reserve=reserve,
            counter=TokenCounter(engine),
            meter=self._meter,
            relevance=self._relevance() if track == "protocol" else None,
        )
        return engine, track, settings

    def _relevance(self) -> Relevance | None:
        """The off-topic check's scorer: memory's cached embedder, or the configured one;
        None when it is switched off or the embedder is not installed (doctor says so)."""
        below = self.config.agent.off_topic_below
        if below is None:
            return None

        def load() -> Any:
            if self.memory is not None and self.memory.store.embedder is not None:
                return self.memory.store.embedder  # vectors cached in lar.db
            from lar.memory import open_embedder

            return open_embedder(self.config)

        return Relevance(threshold=below, load=load)

    def _model(self, name: str) -> tuple[Engine, Track, LoopSettings]:
        """The engine, track and loop settings of a configured model, built on first use."""
        if name not in self._models:
            engine = build_engine(
                self.config,
                name,
                self._progress,
                # a routed model fails over to the fallbacks; one the caller named does not
                failover=True if self._fixed is None else None,
            )
            self._models[name] = self._prepare(engine, self.config.model_named(name))
        return self._models[name]

    def route(self, text: str, *, urgency: float = 0.0) -> Decision:
        """Which model answers ``text``, and why (L2, L3); nothing is called."""
        ctx = RouteContext.of(text, urgency)
        if self.router is None:
            name = self._fixed or self.engine.name
            c = ctx.complexity
            return Decision(
                name, "fixed", "fixed", f"model {name} chosen by the caller",
                ctx.query_class, c.score, c.tier, c.budget(),
            )  # fmt: skip
        return self.router.decide(ctx)

    def _use(self, decision: Decision) -> None:
        self.last_decision = decision
        if self.router is not None:
            self.engine, self.track, self.settings = self._model(decision.model)

    def _info(self, name: str) -> ModelInfo | None:
        found = self._infos.get(name)
        if found is None:
            for model_name, (engine, _, _) in self._models.items():
                if name in (engine.name, engine.model):
                    found = self._infos.get(model_name)
        return found or lookup(name)

    def feedback(self, trace_id: str, score: int, comment: str | None = None) -> None:
        """Attach +1 or −1 (and a comment) to a run's trace (L5); the learned router uses it."""
        if self.traces is None:
            raise LarError("this agent keeps no traces (traces=False)")
        self.traces.feedback(trace_id, score, comment)

    # --- async API --------------------------------------------------------------------------

    async def astream(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        stream_text: bool = True,
        urgency: float = 0.0,
    ) -> AsyncIterator[Event]:
        """Events for one user message. ``history`` (if given) is extended in place.

        The router picks the model first (``urgency`` above 0.8 asks for the smallest). With a
        task store every step is checkpointed; the run id is the task id and the trace id.
        """
        decision = self.route(text, urgency=urgency)
        self._use(decision)
        messages = history if history is not None else []
        messages.append(Message("user", text))
        run_id = "t_" + secrets.token_hex(6)
        trace = None
        if self.traces is not None:
            trace = TraceRecorder(
                self.traces,
                run_id,
                self.redactor.text(text),
                session=self.session_id,
                info=self._info,
                max_latency_s=self.config.router.max_latency_s,
                max_cost_usd=self.config.router.max_cost_usd,
                # events come masked by the agent; a memory may know secrets the agent does not
                redact=self.memory.redact if self.memory is not None else None,
            )
        recorder = lock = None
        if self.tasks is not None:
            self.tasks.create(run_id, text, self.engine.name)
            lock = self.tasks.lock(run_id)
            recorder = self._recorder(run_id)
        prelude: list[Event] = [decision]
        if self.memory is not None:
            prelude += await self._consolidate_if_due()
            prelude += self._memory_begin(text)
            log_turn(self.memory, "user", text)
        try:
            async for event in self._drive(messages, run_id, recorder, stream_text, prelude):
                if trace is not None:
                    trace.observe(event)
                yield event
        finally:
            if lock is not None:
                lock.release()
            if trace is not None and not trace.done:
                trace.finish()  # interrupted: still a trace, outcome "interrupted"
        if self.memory is not None:
            answer = _final_text(messages)
            log_turn(self.memory, "assistant", answer)
            self.memory.save_working(text, answer, self.state.get(CHECKPOINT_KEY, ""))
            self.memory.sync_files()

    async def _summarize(self, prompt: str) -> str:
        response = await self.engine.generate(
            [Message("user", prompt)], None, max_tokens=256, temperature=0.0
        )
        return response.content

    async def _consolidate_if_due(self) -> list[Event]:
        """This session, once idle 5 minutes or at 20 open turns (M5)."""
        assert self.memory is not None
        if self.memory.session_id not in due_sessions(self.memory):
            return []
        done = await consolidate(
            self.memory, self.memory.session_id, self._summarize, self.memory.files
        )
        if done is None:
            return []
        return [
            Notice(
                "consolidated",
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
        return self._event_loop().run_until_complete(self.aconsolidate(force=force))

    def _memory_begin(self, text: str, *, write: bool = True) -> list[Event]:
        """Recall for the message, store its statements, and set the prompt's memory part."""
        assert self.memory is not None
        t0 = time.perf_counter()
        recalled = self.memory.begin(text, log_it=write)
        took = (time.perf_counter() - t0) * 1000
        events: list[Event] = [MemoryRecalled(text, [r.as_log() for r in recalled], took)]
        if write:
            events += self.memory.observe_user(text)
        self.state[MEMORY_KEY] = MemoryParts(
            self.memory.index_lines(),
            [(self.memory.line(r), r.score) for r in recalled],
            self.memory.working(),
        ).to_state()
        return events

    async def apreview(
        self, text: str, *, history: list[Message] | None = None, estimate: bool = False
    ) -> PromptPreview:
        """The prompt the model would get for ``text`` now, its parts' tokens and limits.

        Nothing is stored: no memory is written and the recall is not logged. ``estimate``
        counts 3.5 characters a token instead of asking the model's tokenizer.
        """
        messages = [*(history or []), Message("user", text)]
        if self.memory is not None:
            self._memory_begin(text, write=False)
        ctx = ToolContext(workspace=self.workspace, home=self.config.home, state=self.state)
        settings = self.settings
        n_ctx = settings.n_ctx or 4096
        counter = TokenCounter(None) if estimate else settings.counter or TokenCounter(self.engine)
        tools = self.executor.visible()
        fitted = await fit_request(
            dataclasses.replace(settings, n_ctx=n_ctx), counter, ctx, messages, tools, False, {}
        )
        system = system_message(
            settings,
            fitted.tools,
            ctx,
            answer_mode=False,
            memory=fitted.memory,
            summary=fitted.summary,
        )
        request = [system, *render_history(fitted.history, settings.track, answer_mode=False)]
        total = sum(await counter.count([m.content for m in request])) + PER_MESSAGE * len(request)
        return PromptPreview(
            request,
            fitted.tokens,
            fitted.limits,
            total,
            n_ctx,
            settings.reserve,
            bool(counter.exact),
            fitted.events,
        )

    def preview(
        self, text: str, *, history: list[Message] | None = None, estimate: bool = False
    ) -> PromptPreview:
        """Blocking ``apreview``."""
        return self._event_loop().run_until_complete(
            self.apreview(text, history=history, estimate=estimate)
        )

    async def aresume(self, task_id: str, *, stream_text: bool = True) -> AsyncIterator[Event]:
        """Continue a task from its last checkpoint; completed tool calls are not run again."""
        if self.tasks is None:
            raise LarError("resuming needs a task store: Agent(tasks=TaskStore(...))")
        record = self.tasks.get(task_id)
        lock = self.tasks.lock(task_id)  # TaskBusy while another process runs it
        try:
            record = self.tasks.get(task_id)  # as it is now that no one else can change it
            if record.status in ("succeeded", "failed"):
                why = record.result or record.error or "no answer was recorded"
                raise LarError(f"task {task_id} already ended ({record.status}): {why}")
            history, state = self.tasks.load_checkpoint(task_id)
            self.state.update(state)
            recorder = self._recorder(task_id)
            async for event in self._drive(history, task_id, recorder, stream_text):
                yield event
        finally:
            lock.release()

    def _recorder(self, task_id: str) -> TaskRecorder:
        assert self.tasks is not None
        return TaskRecorder(self.tasks, task_id)

    async def _drive(
        self,
        messages: list[Message],
        run_id: str,
        recorder: TaskRecorder | None,
        stream_text: bool,
        prelude: list[Event] | None = None,
    ) -> AsyncIterator[Event]:
        ctx = ToolContext(
            workspace=self.workspace,
            home=self.config.home,
            run_id=run_id,
            state=self.state,
            ask_user=self.ask_user,
            sandbox=self.config.tools.sandbox,
            memory=self.memory,
            redact=self.redactor.text,
        )
        settings = self.settings
        if settings.stream != stream_text:
            settings = LoopSettings(**{**_fields(settings), "stream": stream_text})
        ended = False
        try:
            async for event in run_loop(
                self.engine, self.executor, messages, ctx, settings, recorder
            ):
                ended = ended or isinstance(event, Final)
                if isinstance(event, ToolCallFinished) and self.memory is not None:
                    used = self.executor.tools.get(event.result.name)
                    outside = used is None or used.reads_outside
                    self.memory.note_result(event.result.ok, event.result.content, outside=outside)
                yield self.redactor.event(event)
                if isinstance(event, RunStarted):
                    for extra in prelude or ():
                        yield self.redactor.event(extra)
        except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
            # Stopped from outside (Ctrl-C, SIGTERM, a consumer that stopped reading): the
            # task stays resumable; what ran is checkpointed already.
            if recorder is not None and not ended:
                recorder.status("interrupted", error="interrupted")
            raise

    async def arun(
        self, text: str, *, history: list[Message] | None = None, urgency: float = 0.0
    ) -> RunResult:
        events: list[Event] = []
        calls: dict[str, ToolCall] = {}
        executed: list[ExecutedCall] = []
        final: Final | None = None
        error: str | None = None
        failure: ErrorEvent | None = None
        run_id = ""
        async for event in self.astream(text, history=history, stream_text=False, urgency=urgency):
            events.append(event)
            if isinstance(event, RunStarted):
                run_id = event.run_id
            if isinstance(event, ToolCallStarted):
                calls[event.call.id] = event.call
            elif isinstance(event, ToolCallFinished):
                r = event.result
                call = calls.get(r.call_id)
                if call is not None and r.ran:
                    executed.append(
                        ExecutedCall(
                            call.name,
                            call.arguments,
                            r.value if r.ok else r.content,
                            ok=r.ok,
                            error=r.error,
                        )
                    )
            elif isinstance(event, ErrorEvent):
                error, failure = event.message, event
            elif isinstance(event, Final):
                final = event
        assert final is not None
        if final.stop_reason == "error":
            raise _failure_error(failure, self.engine.name)
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

    # --- sync API ---------------------------------------------------------------------------

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        """The agent's own event loop, kept across calls so HTTP connections are reused.

        A plain loop rather than ``asyncio.Runner``: on Python 3.11 ``Runner.run`` calls
        ``signal.getsignal``, which formats the repr of the running task on every call
        (~0.2 ms per run, measured in bench/overhead.py).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise LarError(
                "Agent.run()/stream() cannot be called from a running event loop; "
                "use `await agent.arun(...)` or `agent.astream(...)` there"
            )
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            # Closed by close(), or when the agent is garbage-collected or the interpreter exits,
            # so `Agent(...).run(...)` without a `with` block leaks neither loop nor sockets.
            self._finalizer = weakref.finalize(
                self, _shutdown, self._loop, self._models, self.executor
            )
        return self._loop

    def run(
        self, text: str, *, history: list[Message] | None = None, urgency: float = 0.0
    ) -> RunResult:
        """Run to a final answer (blocking)."""
        return self._event_loop().run_until_complete(self._run_exclusive(text, history, urgency))

    async def _run_exclusive(
        self, text: str, history: list[Message] | None, urgency: float
    ) -> RunResult:
        # This run is the only thing on the agent's private loop: engines may block it.
        token = exclusive_loop.set(True)
        try:
            return await self.arun(text, history=history, urgency=urgency)
        finally:
            exclusive_loop.reset(token)

    def stream(
        self, text: str, *, history: list[Message] | None = None, urgency: float = 0.0
    ) -> Iterator[Event]:
        """Events as they happen (blocking iterator), text deltas included."""
        return self._iterate(self.astream(text, history=history, stream_text=True, urgency=urgency))

    def resume(self, task_id: str) -> Iterator[Event]:
        """Events of a resumed task (blocking iterator)."""
        return self._iterate(self.aresume(task_id))

    def _iterate(self, agen: AsyncIterator[Event]) -> Iterator[Event]:
        loop = self._event_loop()
        self._interrupted = False

        async def step() -> Event:
            return await anext(agen)

        try:
            while True:
                if self._interrupted:
                    raise RunInterrupted(self._run_id)
                task = loop.create_task(step())
                self._step = task
                try:
                    event = loop.run_until_complete(task)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if not self._interrupted:
                        raise
                    raise RunInterrupted(self._run_id) from None
                except KeyboardInterrupt:
                    # Ctrl-C with Python's own handler (lar chat, a script): stop the step the
                    # same way, so the generator is not left running and the task is resumable.
                    self._interrupted = True
                    task.cancel()
                    try:
                        loop.run_until_complete(task)
                    except BaseException:  # noqa: BLE001, S110 - the step is being stopped
                        pass
                    raise RunInterrupted(self._run_id) from None
                finally:
                    self._step = None
                if isinstance(event, RunStarted):
                    self._run_id = event.run_id
                yield event
        finally:
            # The step is done (or was never started), so the generator is not running: its
            # cleanup (the task marked interrupted, sandbox processes killed) runs here.
            loop.run_until_complete(_aclose(agen))

    def interrupt(self) -> None:
        """Stop the run in progress at its next await: safe from a signal handler or a thread.

        The task is left ``interrupted`` (resumable with ``lar resume``) and the blocking
        iterator raises :class:`RunInterrupted`. Running sandbox processes are killed.
        """
        self._interrupted = True
        step, loop = self._step, self._loop
        if step is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(step.cancel)

    def close(self) -> None:
        """Release the event loop, HTTP connections, tool threads and the memory store."""
        if self._finalizer is not None:
            self._finalizer()
        else:
            self.executor.close()
        if self.memory is not None:
            self.memory.store.close()
            self.memory = None
        if self.traces is not None:
            self.traces.close()
            self.traces = None
        self._loop = None
        self._finalizer = None

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _shutdown(
    loop: asyncio.AbstractEventLoop,
    models: dict[str, tuple[Engine, Any, Any]],
    executor: ToolExecutor,
) -> None:
    executor.close()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        try:
            for engine, _, _ in list(models.values()):
                loop.run_until_complete(engine.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
        return
    # Collected while another event loop runs in this thread: ours cannot run now, only close.
    loop.close()


async def _aclose(agen: AsyncIterator[Event]) -> None:
    close = getattr(agen, "aclose", None)
    if close is not None:
        await close()


def _final_text(messages: list[Message]) -> str:
    for m in reversed(messages):
        if m.role == "assistant" and not m.tool_calls:
            return m.content
    return "(no answer)"


def _fields(settings: LoopSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
