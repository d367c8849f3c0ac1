"""What runs agents: configuration, engines, the router, the task store, traces and memory (A1).

A ``Runner`` is shared: any number of sessions (``runner.session(agent)``), of one agent or of
several, run on it at once, each on the model its router or its agent picks. Engines are built
once per model and kept; nothing here belongs to one run. A session (``lar.agents.session``)
holds one conversation's state, its tool executor and its approver.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.errors import LarError

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.context import TokenCounter
    from lar.agents.session import Session
    from lar.agents.state import TaskStore
    from lar.calling.relevance import Relevance
    from lar.config import LarConfig, ModelConfig
    from lar.engines.base import Engine
    from lar.engines.catalog import ModelInfo
    from lar.memory.agent_memory import AgentMemory
    from lar.routing import Decision, RouterPolicy
    from lar.telemetry.records import EnergyMeter
    from lar.tools.executor import Approver
    from lar.traces import TraceStore

__all__ = ["Runner", "Progress"]

Progress = Callable[[int, int], None]


class Runner:
    """Keyword-only, every argument optional.

    ``engine`` (or ``base_url``, for an OpenAI-compatible endpoint serving ``model``) fixes the
    engine every session uses; without it each run goes to its agent's ``model``, else to the
    router's choice among the configured models, else to the embedded default. ``queued``: calls
    to each engine wait their turn in arrival order (lar.engines.queue).
    """

    def __init__(
        self,
        *,
        config: LarConfig | None = None,
        engine: Engine | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        tasks: TaskStore | None = None,
        memory: AgentMemory | bool = False,
        traces: TraceStore | bool = True,
        on_model_progress: Progress | None = None,
        queued: bool = False,
    ) -> None:
        from lar.config import load_config
        from lar.redact import Redactor
        from lar.telemetry.records import default_meter

        self.config = config or load_config()
        self._progress = on_model_progress
        if engine is None and base_url is not None:
            from lar.engines.openai_http import OpenAIEngine

            engine = OpenAIEngine(base_url=base_url, model=model or "default", api_key=api_key)
        if engine is not None and queued:
            from lar.engines.queue import QueuedEngine

            engine = QueuedEngine(engine)
        self.queued = queued
        """Engines take calls in arrival order (``lar serve``: many sessions, one model)."""
        self.fixed: Engine | None = engine
        """The engine every run uses, when the caller chose one."""
        self.fixed_config: ModelConfig | None = None
        if engine is not None and base_url is None:
            named = model or self.config.model
            if named in [*(m.name for m in self.config.models), "default"]:
                self.fixed_config = self.config.model_named(named)
        self._engines: dict[str, Engine] = {}
        self._counters: dict[int, TokenCounter] = {}
        self._router: RouterPolicy | None | bool = False  # False: not built yet
        self._relevance: Relevance | None | bool = False
        self._infos: dict[str, ModelInfo | None] = {}
        self.meter: EnergyMeter | None = default_meter()
        if traces is True:
            from lar.traces import TraceStore

            traces = TraceStore(self.config.home / "lar.db")
        self.traces: TraceStore | None = traces or None
        self.tasks = tasks
        if memory is True:
            from lar.memory import open_memory
            from lar.skills import SkillStore

            memory = open_memory(self.config, skill_lines=SkillStore(self.config.home).l3_lines)
        self.memory: AgentMemory | None = memory or None
        self.redactor = Redactor([*self.config.secrets(), *([api_key] if api_key else [])])
        self._loop: asyncio.AbstractEventLoop | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._borrowed = False  # the stores belong to another runner (``sibling``)

    def sibling(self, engine: Engine) -> Runner:
        """A runner on ``engine`` sharing this one's config, task store, memory and traces (a
        sub-agent with an engine of its own); closing it leaves those open."""
        other = Runner(
            config=self.config, engine=engine, tasks=self.tasks, memory=self.memory or False,
            traces=self.traces or False,
        )  # fmt: skip
        other._borrowed = True
        return other

    # --- models ------------------------------------------------------------------------------

    def engine(self, name: str, *, named: bool = False) -> Engine:
        """The engine of configured model ``name``, built on first use and kept. A model the
        agent ``named`` does not fail over; a routed or default one fails over to the
        configured fallbacks."""
        if self.fixed is not None:
            return self.fixed
        key = f"{name}\x00named" if named else name
        if key not in self._engines:
            from lar.engines.factory import build_engine

            engine = build_engine(
                self.config, name, self._progress, failover=None if named else True
            )
            if self.queued:
                from lar.engines.queue import QueuedEngine

                engine = QueuedEngine(engine)
            self._engines[key] = engine
        return self._engines[key]

    def counter(self, engine: Engine) -> TokenCounter:
        """One token counter per engine, shared by every session (a text is tokenized once)."""
        from lar.agents.context import TokenCounter

        found = self._counters.get(id(engine))
        if found is None:
            found = self._counters[id(engine)] = TokenCounter(engine)
        return found

    def model_config(self, name: str) -> ModelConfig | None:
        if self.fixed is not None:
            return self.fixed_config
        return self.config.model_named(name)

    @property
    def router(self) -> RouterPolicy | None:
        """The configured router (None: ``policy: fixed`` or a fixed engine)."""
        if self._router is False:
            from lar.routing.make import make_router

            self._router = None if self.fixed is not None else make_router(self.config)
        return self._router  # type: ignore[return-value]

    def route(self, agent: Agent, text: str, *, urgency: float = 0.0) -> Decision:
        """Which model answers ``text`` for ``agent``, and why (L2, L3); nothing is called."""
        from lar.routing import Decision, RouteContext

        ctx = RouteContext.of(text, urgency)
        router = None if agent.model is not None else self.router
        if router is None:
            name = self.fixed.name if self.fixed is not None else agent.model or self.config.model
            c = ctx.complexity
            return Decision(
                name, "fixed", "fixed", f"model {name} chosen by the caller",
                ctx.query_class, c.score, c.tier, c.budget(),
            )  # fmt: skip
        return router.decide(ctx)

    def info(self, name: str) -> ModelInfo | None:
        """Catalog facts (price, size) of a model, by configured name or engine name."""
        from lar.engines.catalog import describe, lookup

        if name not in self._infos:
            found = None
            configured = [m.name for m in self.config.models]
            if name in configured or name == self.config.model:
                found = describe(self.config.model_named(name))
            else:
                for key, engine in self._engines.items():
                    if name in (engine.name, engine.model):
                        found = describe(self.config.model_named(key.split("\x00")[0]))
            self._infos[name] = found or lookup(name)
        return self._infos[name]

    def relevance(self) -> Relevance | None:
        """The off-topic check's scorer: memory's cached embedder, or the configured one;
        None when it is switched off or the embedder is not installed (doctor says so)."""
        if self._relevance is False:
            below = self.config.agent.off_topic_below
            if below is None:
                self._relevance = None
            else:
                from lar.calling.relevance import Relevance

                def load() -> Any:
                    if self.memory is not None and self.memory.store.embedder is not None:
                        return self.memory.store.embedder  # vectors cached in lar.db
                    from lar.memory import open_embedder

                    return open_embedder(self.config)

                self._relevance = Relevance(threshold=below, load=load)
        return self._relevance  # type: ignore[return-value]

    def engines(self) -> list[Engine]:
        """The engines built so far (the fixed one first)."""
        return [*([self.fixed] if self.fixed is not None else []), *self._engines.values()]

    # --- sessions ----------------------------------------------------------------------------

    def session(
        self,
        agent: Agent,
        *,
        session_id: str | None = None,
        workspace: str | Path | None = None,
        approver: Approver | None = None,
        ask_user: Callable[[str], str | None] | None = None,
        model: str | None = None,
    ) -> Session:
        """A new conversation of ``agent`` on this runner (``model`` overrides the agent's)."""
        from lar.agents.session import Session

        if model is not None:
            agent = agent.replace(model=model)
        return Session(
            agent,
            self,
            session_id=session_id,
            workspace=workspace,
            approver=approver,
            ask_user=ask_user,
        )

    def feedback(self, trace_id: str, score: int, comment: str | None = None) -> None:
        """Attach +1 or −1 (and a comment) to a run's trace (L5); the learned router uses it."""
        if self.traces is None:
            raise LarError("this runner keeps no traces (traces=False)")
        self.traces.feedback(trace_id, score, comment)

    def learn(self, run_id: str) -> Any:
        """Draft a skill from run ``run_id`` if it earned one (K5, ``skills.learn``): the
        ``lar.skills.crystallize.Learned`` outcome, or None."""
        settings = self.config.skills
        if not settings.learn or self.traces is None:
            return None
        from lar.skills import SkillError, SkillStore
        from lar.skills.crystallize import learn_from_trace

        try:
            trace = self.traces.get(run_id)
            store = SkillStore(self.config.home)
            return learn_from_trace(
                store, trace, min_calls=settings.learn_min_calls, enable=settings.enable_learned
            )
        except (LarError, SkillError, OSError):
            return None  # learning is a bonus: it never fails the run that was answered

    # --- the blocking API's event loop -------------------------------------------------------

    def event_loop(self) -> asyncio.AbstractEventLoop:
        """The runner's own event loop, kept across calls so HTTP connections are reused.

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
                "run()/stream() cannot be called from a running event loop; "
                "use `await session.arun(...)` or `session.astream(...)` there"
            )
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            # Closed by close(), or when the runner is garbage-collected or the interpreter
            # exits, so a run without a `with` block leaks neither loop nor sockets.
            self._finalizer = weakref.finalize(
                self, _shutdown, self._loop, self._engines, self.fixed
            )
        return self._loop

    def close(self) -> None:
        """Release the event loop, HTTP connections, the memory store and the traces."""
        if self._finalizer is not None:
            self._finalizer()
        if self._borrowed:
            self.memory = self.traces = None
        if self.memory is not None:
            self.memory.store.close()
            self.memory = None
        if self.traces is not None:
            self.traces.close()
            self.traces = None
        self._loop = None
        self._finalizer = None

    async def aclose(self) -> None:
        """``close`` from inside an event loop: the engines' connections belong to that loop."""
        for engine in [*self._engines.values(), *([self.fixed] if self.fixed else [])]:
            await engine.aclose()
        self.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _shutdown(
    loop: asyncio.AbstractEventLoop, engines: dict[str, Engine], fixed: Engine | None
) -> None:
    def release() -> None:
        try:
            for engine in [*engines.values(), *([fixed] if fixed is not None else [])]:
                loop.run_until_complete(engine.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        release()
        return
    # Collected while another event loop runs in this thread: ours cannot run here, so it runs
    # on a helper thread for as long as closing the connections takes (bounded: a socket that
    # will not close is left to the interpreter rather than hanging the caller's loop).
    helper = threading.Thread(target=release, name="lar-runner-close", daemon=True)
    helper.start()
    helper.join(timeout=5.0)
