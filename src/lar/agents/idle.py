"""Autonomous idle mode (I4): off by default; when on, after ``after_minutes`` with no task
started by a person, the reviewed actions listed in ``scheduler.idle.actions`` run once for that
idle stretch — and nothing else. GenericAgent's idle mode lets the model decide what to do;
here the model decides nothing about *what* runs: each action is code written and reviewed in
this module, and a config naming anything else is refused when it is read.

Each run is recorded (``idle_runs`` in ``lar.db``) and its result goes to ``lar inbox``; an
action that uses the model runs as a normal task with its trace, allowed only the tools it names
and no tool that asks.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from lar.config import IdleSettings
from lar.scheduler.jobs import JobStore

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.runner import Runner

__all__ = ["IdleMode", "ACTIONS"]

Outcome = tuple[str, str, str | None]  # state, result, task id
Action = Callable[["IdleMode"], Awaitable[Outcome]]


async def _consolidate_memory(mode: IdleMode) -> Outcome:
    if mode.runner is None or mode.agent is None or mode.runner.memory is None:
        return "skipped", "memory is off", None
    session = mode.runner.session(mode.agent, approver=lambda call, tool: False)
    try:
        done = await session.aconsolidate(force=True)
    finally:
        session.close()
    return "done", f"consolidated {len(done)} conversation(s) into memory", None


SUMMARY_REQUEST = "Summarize my notes and my to-do list in a few short lines."


async def _summarize_notes(mode: IdleMode) -> Outcome:
    if mode.runner is None or mode.agent is None:
        return "skipped", "no agent to run it", None
    reader = mode.agent.replace(allowlist=("notes", "todo"))
    session = mode.runner.session(reader, approver=lambda call, tool: False)
    try:
        result = await session.arun(SUMMARY_REQUEST)
    finally:
        session.close()
    return "done", result.text, result.run_id or None


ACTIONS: dict[str, Action] = {
    "consolidate_memory": _consolidate_memory,
    "summarize_notes": _summarize_notes,
}
"""The reviewed list: the only things idle mode can do (``IdleSettings.actions`` names them)."""


class IdleMode:
    """``tick`` runs the listed actions when Lar has been idle long enough, once per stretch."""

    def __init__(
        self,
        settings: IdleSettings,
        store: JobStore,
        *,
        agent: Agent | None = None,
        runner: Runner | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.store = store
        self.agent = agent
        self.runner = runner
        self.clock = clock

    async def tick(self) -> list[str]:
        """The actions run now (none when off, not idle long enough, or already run since the
        last task a person started)."""
        if not self.settings.enabled or not self.settings.actions:
            return []
        last = self.store.last_activity()
        now = self.clock()
        if last is None or now - last < self.settings.after_minutes * 60:
            return []
        previous = self.store.idle_runs(1)
        if previous and previous[0][1] > last:
            return []
        ran: list[str] = []
        for name in self.settings.actions:
            started = self.clock()
            try:
                state, result, task_id = await ACTIONS[name](self)
            except Exception as exc:  # noqa: BLE001 - reported, never raised into the scheduler
                state, result, task_id = "failed", f"{type(exc).__name__}: {exc}", None
            self.store.record_idle(name, started, state, result, task_id)
            self.store.deliver(None, f"Idle ({state}): {name}", result)
            ran.append(name)
        return ran
