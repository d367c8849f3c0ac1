"""``Agent``: a plain, immutable description of an agent (A1) — its tools, instructions, model
choice and limits. No I/O happens in its constructor.

What runs it lives elsewhere: a ``Runner`` (engines, router, task store, traces, memory) and one
``Session`` per conversation (``runner.session(agent)``); one agent may run in many sessions at
once, on different models. ``agent.replace(tools=…)`` makes a changed copy.

For the ten-line case, ``Agent(tools=[add]).run("…")`` still works: the agent then runs in a
session of its own, on a runner built from the keyword arguments that say how to run it
(``engine``, ``base_url``, ``config``, ``workspace``, ``approver``, ``memory`` …); attributes such
as ``agent.engine`` or ``agent.memory`` are that session's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from dataclasses import replace as _replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lar.tools.base import Tool

if TYPE_CHECKING:
    from lar.agents.loop import LoopSettings
    from lar.agents.results import PromptPreview, RunResult
    from lar.agents.runner import Progress, Runner
    from lar.agents.session import Session
    from lar.agents.state import TaskStore
    from lar.config import LarConfig
    from lar.engines.base import Engine
    from lar.memory.agent_memory import AgentMemory
    from lar.memory.consolidate import Consolidated
    from lar.routing import Decision
    from lar.tools.executor import Approver, ToolExecutor
    from lar.traces import TraceStore
    from lar.types import Event, Message

__all__ = ["Agent", "RunResult", "PromptPreview", "resolve_track"]  # noqa: F822 - lazy

TrackName = Literal["auto", "native", "protocol", "constrained"]


@dataclass(frozen=True, slots=True)
class _HowToRun:
    """The convenience API's runner and session arguments (not part of the description)."""

    engine: Engine | None = None
    base_url: str | None = None
    api_key: str | None = None
    config: LarConfig | None = None
    workspace: str | Path | None = None
    approver: Approver | None = None
    ask_user: Callable[[str], str | None] | None = None
    on_model_progress: Progress | None = None
    tasks: TaskStore | None = None
    memory: AgentMemory | bool = False
    session_id: str | None = None
    traces: TraceStore | bool = True


@dataclass(frozen=True, slots=True)
class _Description:
    tools: tuple[Tool, ...] = ()
    model: str | None = None
    track: TrackName | None = None
    max_turns: int | None = None
    system_prompt: str | None = None
    allowlist: tuple[str, ...] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    n_ctx: int | None = None
    policies: tuple[str, ...] | None = None
    token_budget: int | None = None
    time_budget_s: float | None = None
    kind: str | None = None
    name: str | None = None
    description: str | None = None
    members: tuple[tuple[str, Agent], ...] = ()


class Agent:
    """An agent with tools. Keyword-only; every argument is optional.

    Description: ``tools``, ``model`` (a configured model's name; None lets the router choose),
    ``track``, ``max_turns``, ``system_prompt``, ``allowlist``, ``temperature``, ``max_tokens``,
    ``n_ctx``, ``policies`` (names replacing the model profile's, or ``"-name"`` / ``"+name"``
    edits of it; lar.agents.policies), ``token_budget`` and ``time_budget_s`` (what one run may
    use, A2; a run that spends one stops with ``stop_reason`` ``token_budget`` /
    ``time_budget``), ``kind`` (how a run goes: ``loop``, ``simple``, ``codeact``,
    ``operative``, ``delegate`` …; lar.agents.kinds), ``name`` and ``description`` (what a
    manager or the operative state calls it), ``members`` (a delegate's sub-agents by name).
    How ``run`` runs it on its own: every other argument (see
    ``Runner`` and ``Runner.session``); with ``base_url``, ``model`` is the model that endpoint
    serves.
    """

    __slots__ = ("_d", "_how", "_own", "_served")
    _d: _Description
    _how: _HowToRun
    _own: Session | None
    _served: str | None

    def __init__(
        self,
        *,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        model: str | None = None,
        track: TrackName | None = None,
        max_turns: int | None = None,
        system_prompt: str | None = None,
        allowlist: Iterable[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        n_ctx: int | None = None,
        policies: Iterable[str] | None = None,
        token_budget: int | None = None,
        time_budget_s: float | None = None,
        kind: str | None = None,
        name: str | None = None,
        description: str | None = None,
        members: Mapping[str, Agent] | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        engine: Engine | None = None,
        config: LarConfig | None = None,
        workspace: str | Path | None = None,
        approver: Approver | None = None,
        ask_user: Callable[[str], str | None] | None = None,
        on_model_progress: Progress | None = None,
        tasks: TaskStore | None = None,
        memory: AgentMemory | bool = False,
        session_id: str | None = None,
        traces: TraceStore | bool = True,
    ) -> None:
        from lar.tools.base import tool as make_tool

        params: dict[str, Any] = {}
        if temperature is not None:
            params["temperature"] = temperature
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        described = _Description(
            tools=tuple(t if isinstance(t, Tool) else make_tool(t) for t in tools),
            # with base_url the name is the endpoint's model, not a configured one
            model=None if base_url is not None else model,
            track=track,
            max_turns=max_turns,
            system_prompt=system_prompt,
            allowlist=tuple(allowlist) if allowlist is not None else None,
            params=params,
            n_ctx=n_ctx,
            policies=tuple(policies) if policies is not None else None,
            token_budget=token_budget,
            time_budget_s=time_budget_s,
            kind=kind,
            name=name,
            description=description,
            members=tuple((members or {}).items()),
        )
        how = _HowToRun(
            engine, base_url, api_key, config, workspace, approver, ask_user,
            on_model_progress, tasks, memory, session_id, traces,
        )  # fmt: skip
        object.__setattr__(self, "_d", described)
        object.__setattr__(self, "_how", how)
        object.__setattr__(self, "_own", None)
        object.__setattr__(self, "_served", model if base_url is not None else None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Agent is immutable: agent.replace({name}=...) makes a changed copy")

    # --- the description ---------------------------------------------------------------------

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self._d.tools

    @property
    def model(self) -> str | None:
        return self._d.model

    @property
    def track(self) -> TrackName | None:
        return self._d.track

    @property
    def max_turns(self) -> int | None:
        return self._d.max_turns

    @property
    def system_prompt(self) -> str | None:
        return self._d.system_prompt

    @property
    def allowlist(self) -> tuple[str, ...] | None:
        return self._d.allowlist

    @property
    def params(self) -> Mapping[str, Any]:
        """Generation parameters (``temperature``, ``max_tokens``)."""
        return self._d.params

    @property
    def n_ctx(self) -> int | None:
        return self._d.n_ctx

    @property
    def policies(self) -> tuple[str, ...] | None:
        return self._d.policies

    @property
    def token_budget(self) -> int | None:
        return self._d.token_budget

    @property
    def time_budget_s(self) -> float | None:
        return self._d.time_budget_s

    @property
    def kind(self) -> str | None:
        return self._d.kind

    @property
    def name(self) -> str | None:
        return self._d.name

    @property
    def description(self) -> str | None:
        return self._d.description

    @property
    def members(self) -> tuple[tuple[str, Agent], ...]:
        """A delegate's sub-agents, by name."""
        return self._d.members

    def replace(self, **changes: Any) -> Agent:
        """A copy with some of the description changed (``tools``, ``model``, ``track`` …)."""
        from lar.tools.base import tool as make_tool

        names = {f.name for f in fields(_Description)}
        unknown = set(changes) - names
        if unknown:
            raise TypeError(f"Agent.replace: unknown {', '.join(sorted(unknown))}")
        if "tools" in changes:
            changes["tools"] = tuple(
                t if isinstance(t, Tool) else make_tool(t) for t in changes["tools"]
            )
        for key in ("allowlist", "policies"):
            if changes.get(key) is not None:
                changes[key] = tuple(changes[key])
        if isinstance(changes.get("members"), Mapping):
            changes["members"] = tuple(changes["members"].items())
        copy = Agent.__new__(Agent)
        object.__setattr__(copy, "_d", _replace(self._d, **changes))
        object.__setattr__(copy, "_how", self._how)
        object.__setattr__(copy, "_own", None)
        object.__setattr__(copy, "_served", self._served)
        return copy

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its description and engine (a Ray worker rebuilds it): the stores,
        approver and session stay in this process; the worker opens its own in LAR_HOME."""
        how = _HowToRun(
            self._how.engine, self._how.base_url, self._how.api_key, self._how.config,
            self._how.workspace,
        )  # fmt: skip
        return (_rebuilt, (self._d, how, self._served))

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self.tools)
        kind = f", kind={self.kind!r}" if self.kind else ""
        return f"Agent(tools=[{names}], model={self.model!r}, track={self.track!r}{kind})"

    # --- the convenience session -------------------------------------------------------------

    def session(self) -> Session:
        """The session ``run``/``stream``/``resume`` use, built on first use with its runner."""
        if self._own is None:
            from lar.agents.runner import Runner

            how = self._how
            runner = Runner(
                config=how.config,
                engine=how.engine,
                base_url=how.base_url,
                api_key=how.api_key,
                model=self._served if how.base_url is not None else self.model,
                tasks=how.tasks,
                memory=how.memory,
                traces=how.traces,
                on_model_progress=how.on_model_progress,
            )
            own = runner.session(
                self,
                session_id=how.session_id,
                workspace=how.workspace,
                approver=how.approver,
                ask_user=how.ask_user,
            )
            object.__setattr__(self, "_own", own)
            return own
        return self._own

    def run(
        self, text: str, *, history: list[Message] | None = None, urgency: float = 0.0
    ) -> RunResult:
        """Run to a final answer (blocking)."""
        return self.session().run(text, history=history, urgency=urgency)

    async def arun(
        self, text: str, *, history: list[Message] | None = None, urgency: float = 0.0
    ) -> RunResult:
        return await self.session().arun(text, history=history, urgency=urgency)

    def stream(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        urgency: float = 0.0,
        aside: bool = False,
    ) -> Iterator[Event]:
        """Events as they happen (blocking iterator), text deltas included; ``aside``: a side
        question (``Session.astream``)."""
        return self.session().stream(text, history=history, urgency=urgency, aside=aside)

    def astream(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        stream_text: bool = True,
        urgency: float = 0.0,
    ) -> AsyncIterator[Event]:
        return self.session().astream(
            text, history=history, stream_text=stream_text, urgency=urgency
        )

    def resume(self, task_id: str) -> Iterator[Event]:
        return self.session().resume(task_id)

    def aresume(self, task_id: str, *, stream_text: bool = True) -> AsyncIterator[Event]:
        return self.session().aresume(task_id, stream_text=stream_text)

    def route(self, text: str, *, urgency: float = 0.0) -> Decision:
        return self.session().route(text, urgency=urgency)

    def preview(
        self, text: str, *, history: list[Message] | None = None, estimate: bool = False
    ) -> PromptPreview:
        return self.session().preview(text, history=history, estimate=estimate)

    async def apreview(
        self, text: str, *, history: list[Message] | None = None, estimate: bool = False
    ) -> PromptPreview:
        return await self.session().apreview(text, history=history, estimate=estimate)

    def feedback(self, trace_id: str, score: int, comment: str | None = None) -> None:
        self.session().feedback(trace_id, score, comment)

    def consolidate(self, *, force: bool = False) -> list[Consolidated]:
        return self.session().consolidate(force=force)

    async def aconsolidate(self, *, force: bool = False) -> list[Consolidated]:
        return await self.session().aconsolidate(force=force)

    def interrupt(self) -> None:
        if self._own is not None:
            self._own.interrupt()

    # The convenience session's parts, for scripts and tests.
    @property
    def engine(self) -> Engine:
        return self.session().engine

    @property
    def settings(self) -> LoopSettings:
        return self.session().settings

    @property
    def executor(self) -> ToolExecutor:
        return self.session().executor

    @property
    def state(self) -> dict[str, Any]:
        return self.session().state

    @property
    def memory(self) -> AgentMemory | None:
        return self.session().memory

    @property
    def workspace(self) -> Path:
        return self.session().workspace

    @property
    def last_decision(self) -> Decision | None:
        return self.session().last_decision

    @property
    def runner(self) -> Runner:
        return self.session().runner

    def close(self) -> None:
        """Release the convenience session and its runner (loop, connections, stores)."""
        own = self._own
        if own is not None:
            own.close()
            own.runner.close()
            object.__setattr__(self, "_own", None)

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rebuilt(described: _Description, how: _HowToRun, served: str | None) -> Agent:
    agent = Agent.__new__(Agent)
    for name, value in (("_d", described), ("_how", how), ("_own", None), ("_served", served)):
        object.__setattr__(agent, name, value)
    return agent


def __getattr__(name: str) -> Any:
    if name in ("RunResult", "PromptPreview", "resolve_track"):
        from lar.agents import results

        return getattr(results, name)
    raise AttributeError(name)
