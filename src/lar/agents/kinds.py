"""Agent kinds (A4): how one run of an agent goes, chosen per agent (``Agent(kind=…)``) or in
the config (``agent.kind``), behind one registry (R1).

- ``loop`` (default): the tool-calling loop on the model's track (native, protocol or
  constrained, lar.agents.loop); ``react`` and ``native`` are the same loop held to the text
  protocol or to native tool calls;
- ``simple``: one model call, no tools;
- ``codeact``: the model writes Python that runs in the sandbox with the agent's tools callable
  inside it (lar.agents.codeact);
- ``operative``: long-running; its state is kept under ``operator:{id}:state`` across sessions
  and processes, and when the model did not save it, a summary of the run is saved for it;
- ``delegate``: a manager splits the request among named sub-agents (lar.agents.delegate).

Every kind runs inside a ``Session``: the same task store, traces, memory and event stream.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from lar.agents.loop import run_loop
from lar.registry import Registry
from lar.tools.base import tool
from lar.types import Code, Event, Final, Message, Notice, ToolCallFinished

if TYPE_CHECKING:
    from lar.agents.request import Carried, LoopSettings
    from lar.agents.session import Session
    from lar.agents.state import TaskRecorder
    from lar.engines.base import Engine
    from lar.tools.base import ToolContext
    from lar.tools.executor import ToolExecutor

__all__ = ["AgentKind", "AgentKindRegistry", "RunParts", "kind_named", "state_key"]


class AgentKindRegistry(Registry[type["AgentKind"]]):
    kind = "agent kind"


@dataclass(slots=True)
class RunParts:
    """What a session hands a kind for one run."""

    session: Session
    engine: Engine
    executor: ToolExecutor
    messages: list[Message]
    ctx: ToolContext
    settings: LoopSettings
    recorder: TaskRecorder | None
    carried: Carried

    def loop(self, executor: ToolExecutor | None = None, **changes: Any) -> AsyncIterator[Event]:
        """The tool loop on these parts, with ``executor`` and loop settings changed."""
        settings = dataclasses.replace(self.settings, **changes) if changes else self.settings
        return run_loop(
            self.engine, executor or self.executor, self.messages, self.ctx, settings,
            self.recorder, self.carried,
        )  # fmt: skip


class AgentKind:
    """One way to run an agent; subclasses are registered by name."""

    name: ClassVar[str] = "loop"
    summary: ClassVar[str] = ""

    def run(self, parts: RunParts) -> AsyncIterator[Event]:
        return parts.loop()


@AgentKindRegistry.register("loop")
class ToolLoop(AgentKind):
    summary = "the tool-calling loop on the model's track (the default)"


@AgentKindRegistry.register("react")
class React(AgentKind):
    name = "react"
    summary = "the tool loop held to the text protocol (calls written in the reply)"

    def run(self, parts: RunParts) -> AsyncIterator[Event]:
        return parts.loop(track="protocol")


@AgentKindRegistry.register("native")
class Native(AgentKind):
    name = "native"
    summary = "the tool loop held to the engine's native tool calls"

    def run(self, parts: RunParts) -> AsyncIterator[Event]:
        return parts.loop(track="native")


@AgentKindRegistry.register("simple")
class Simple(AgentKind):
    name = "simple"
    summary = "one model call, no tools"

    def run(self, parts: RunParts) -> AsyncIterator[Event]:
        return parts.loop(parts.executor.sibling([], keep=False), max_turns=1)


@AgentKindRegistry.register("codeact")
class CodeAct(AgentKind):
    name = "codeact"
    summary = "the model writes Python, run in the sandbox with the tools as functions"

    def run(self, parts: RunParts) -> AsyncIterator[Event]:
        from lar.agents.codeact import codeact_tool

        outer = parts.executor.sibling([codeact_tool(parts.executor)], keep=False)
        return parts.loop(outer, track="protocol", codeact=True, policies=())


STATE_TOOL = "save_state"
AUTO_STATE_CHARS = 1000


def state_key(operator_id: str) -> str:
    return f"operator:{operator_id}:state"


@AgentKindRegistry.register("operative")
class Operative(AgentKind):
    name = "operative"
    summary = "long-running: its state is kept across sessions under operator:{id}:state"

    async def run(self, parts: RunParts) -> AsyncIterator[Event]:
        from lar.memory.state import StateStore

        session = parts.session
        runner = session.runner
        memory = runner.memory
        store = (
            StateStore(memory.store.db)
            if memory is not None
            else StateStore.at(runner.config.home / "lar.db")
        )
        operator = session.agent.name or runner.config.agent.name or "default"
        key = state_key(operator)
        saved: list[str] = []

        @tool(name=STATE_TOOL)
        def save_state(state: str) -> str:
            """Save what you must remember for your next session (progress, open items).

            Args:
                state: The whole state, replacing the one saved before.
            """
            store.put(key, session.runner.redactor.text(state))
            saved.append(state)
            return "saved"

        earlier = store.get(key)
        prompt = (
            f"{parts.settings.system_prompt}\n\nYou are operator {operator!r}, working across "
            "sessions. Your state saved at the end of the last session:\n"
            f"{earlier or '(nothing saved yet)'}\n"
            f"Before your final answer, call {STATE_TOOL} with what the next session needs."
        )
        request = next((m.content for m in reversed(parts.messages) if m.role == "user"), "")
        executor = parts.executor.sibling([save_state])
        outside = False  # the run read a file, a page or a command's output
        try:
            async for event in parts.loop(executor, system_prompt=prompt):
                if isinstance(event, ToolCallFinished) and event.result.ran:
                    used = executor.tools.get(event.result.name)
                    outside = outside or used is None or used.reads_outside
                if isinstance(event, Final) and not saved and event.stop_reason != "error":
                    # The state is shown to the next session as its own words: an answer drawn
                    # from outside content could carry injected instructions, so it stays out.
                    answer = (
                        "(drawn from content it read; not carried over)" if outside else event.text
                    )
                    summary = f"last request: {request}\nlast answer: {answer}"
                    store.put(key, runner.redactor.text(summary[:AUTO_STATE_CHARS]))
                    yield Notice(
                        Code.STATE_SAVED, f"{key}: the model saved none; the run's summary kept"
                    )
                yield event
        finally:
            if memory is None:
                store.close()


def kind_named(name: str) -> AgentKind:
    """The kind called ``name``; ``RegistryError`` naming the known ones otherwise."""
    import lar.agents.delegate  # noqa: F401 - registers "delegate"

    return AgentKindRegistry.get(name)()
