"""Due jobs, fired (I4): reminders delivered, requests run as normal tasks with their traces.

At 3 a.m. nobody can answer a confirmation, so a job's run is approved by what the user granted
when the job was made (``Job.grants``, tool names) and by nothing else: any other call that needs
a yes is denied, and the denial is part of what reaches the inbox. A granted tool is still
refused a call the danger check flags (``rm -r``, ``curl … | sh``): a grant covers the tool, not
every command. The run works in the folder the job was made in and under the stricter of its
creator's permissions and this process's, never the folder or the looser settings of whichever
process fires it. A job's run cannot make jobs (the ``schedule`` tool refuses inside one). Every
fired job ends in the inbox and the notifiers, whatever happened: done, failed, denied, skipped
after downtime, or invalid (never run).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.scheduler.jobs import Claim, Job, JobStore
from lar.scheduler.notify import Notifier
from lar.tools.builtin.schedule import SCHEDULED_JOB
from lar.types import ToolCall

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.idle import IdleMode
    from lar.agents.runner import Runner
    from lar.config import LarConfig

__all__ = ["JobRunner", "Fired", "Grants"]

_log = logging.getLogger("lar.scheduler")

Clock = Callable[[], float]


@dataclass(slots=True)
class Grants:
    """The approver of a scheduled run: yes only to the granted tools; remembers each no."""

    granted: frozenset[str]
    denied: list[str] = field(default_factory=list)
    dangerous: list[str] = field(default_factory=list)
    """Granted calls refused for what the danger check found: ``tool: reasons``."""
    how_to_allow: str = (
        "it was not granted when the job was made: remove the job and add it again with "
        "`lar schedule add … --allow TOOL`"
    )

    def __call__(self, call: ToolCall, tool: Any, reasons: Sequence[str] = ()) -> bool:
        if call.name in self.granted and not reasons:
            return True
        if reasons:
            self.dangerous.append(f"{call.name}: {'; '.join(reasons)}")
        else:
            self.denied.append(call.name)
        return False


def _floor(job: Job) -> dict[str, Any]:
    """What a job's maker had: the built-in tools' own permissions, overridden by the maker's
    ``tools.permissions``; any other tool (MCP, skills, the user's) is held to ``confirm``,
    since what the maker's config said of it is not known."""
    from lar.tools import builtin_tools, optional_tools
    from lar.tools.builtin import OPTIONAL_TOOLS

    known = [*builtin_tools(), *optional_tools([t.name for t in OPTIONAL_TOOLS])]
    return {**{t.name: t.permission for t in known}, **(job.permissions or {})}


@dataclass(frozen=True, slots=True)
class Fired:
    """What one claimed due time came to."""

    job: Job
    due: float
    state: str  # done | failed | denied | skipped
    text: str
    task_id: str | None = None
    denied: tuple[str, ...] = ()


class JobRunner:
    """Fires the due jobs of one home. ``agent`` and ``runner`` (or ``make_agent``) run ``run``
    jobs (without them such a job fails with the reason); ``clock`` is the time source (tests
    move it)."""

    def __init__(
        self,
        store: JobStore,
        *,
        agent: Agent | None = None,
        runner: Runner | None = None,
        notifiers: Sequence[Notifier] = (),
        clock: Clock = time.time,
        idle: IdleMode | None = None,
        make_agent: Callable[[], tuple[Agent, Runner]] | None = None,
    ) -> None:
        self.store = store
        self.agent = agent
        self.runner = runner
        self.notifiers = list(notifiers)
        self.clock = clock
        self.idle = idle
        """Idle mode, ticked with the jobs (``serve``)."""
        self.make_agent = make_agent
        """Builds ``agent`` and ``runner`` when a ``run`` job first needs them (a scheduler
        started with reminders only does not load a model until then)."""

    @classmethod
    def for_config(
        cls,
        config: LarConfig,
        store: JobStore,
        *,
        agent: Agent | None = None,
        runner: Runner | None = None,
        make_agent: Callable[[], tuple[Agent, Runner]] | None = None,
    ) -> JobRunner:
        """The job runner of a process: the configured notifiers and idle mode (``lar serve``
        and ``lar schedule run`` both start theirs here)."""
        from lar.agents.idle import IdleMode
        from lar.scheduler import notifiers_from

        return cls(
            store,
            agent=agent,
            runner=runner,
            notifiers=notifiers_from(config.scheduler.notify),
            idle=IdleMode(config.scheduler.idle, store, agent=agent, runner=runner),
            make_agent=make_agent,
        )

    async def tick(self) -> list[Fired]:
        """Claim and fire every job due now; a job another scheduler claimed is left to it."""
        now = self.clock()
        fired: list[Fired] = []
        for job in self.store.due(now):
            claim = self.store.claim(job.id, now)
            if claim is not None:
                fired.append(await self.fire(claim))
        return fired

    async def run_now(self, job_id: int) -> Fired:
        return await self.fire(self.store.claim_now(job_id, self.clock()))

    async def fire(self, claim: Claim) -> Fired:
        job = claim.job
        if claim.decision == "skip":
            outcome = Fired(job, claim.due, "skipped", "Missed while Lar was not running; skipped.")
        elif claim.decision == "invalid":
            why = f"Not run, and it will not be: {job.problem}. Remove it and add it again."
            outcome = Fired(job, claim.due, "invalid", why)
        elif job.action == "remind":
            outcome = Fired(job, claim.due, "done", job.what)
            self.store.finish(claim, "done", job.what)
        else:
            outcome = await self._run(claim)
            self.store.finish(claim, outcome.state, outcome.text, task_id=outcome.task_id)
        await self._deliver(outcome)
        return outcome

    async def _run(self, claim: Claim) -> Fired:
        job = claim.job
        folder = Path(job.folder or "")
        if not job.folder or not await asyncio.to_thread(folder.is_dir):
            why = f"the job's folder {job.folder} no longer exists (or is not a folder)"
            return Fired(job, claim.due, "failed", f"{why}; nothing ran")
        if (self.agent is None or self.runner is None) and self.make_agent is not None:
            try:
                self.agent, self.runner = self.make_agent()
            except Exception as exc:  # noqa: BLE001 - a bad config or model: said in the inbox
                return Fired(job, claim.due, "failed", f"could not start the agent: {exc}")
        if self.agent is None or self.runner is None:
            return Fired(job, claim.due, "failed", "no agent to run requests in this scheduler")
        grants = Grants(frozenset(job.grants))
        session = self.runner.session(self.agent, approver=grants, workspace=folder)
        session.executor.tighten(_floor(job), unknown="confirm")
        session.state[SCHEDULED_JOB] = job.id
        try:
            result = await session.arun(job.what)
        except Exception as exc:  # noqa: BLE001 - the job's failure is reported, never raised
            return Fired(job, claim.due, "failed", f"the run failed: {exc}")
        finally:
            session.close()
        denied = tuple(dict.fromkeys(grants.denied))
        text = result.text
        if denied:
            text += "\n\nDenied (not granted when the job was made): " + ", ".join(denied)
        if grants.dangerous:
            text += "\n\nRefused as dangerous (a grant never covers what the danger check flags):"
            text += "".join(f"\n- {line}" for line in dict.fromkeys(grants.dangerous))
            denied += tuple(line.split(":", 1)[0] for line in grants.dangerous)
        state = "denied" if denied else "done"
        return Fired(job, claim.due, state, text, result.run_id or None, denied)

    async def _deliver(self, fired: Fired) -> None:
        job = fired.job
        if fired.state == "skipped":
            title = f"Job {job.id} skipped: {job.what}"
        elif job.action == "remind":
            title = f"Reminder: {job.what}"
        else:
            title = f"Job {job.id} ({fired.state}): {job.what}"
        title = title[:200]
        self.store.deliver(job.id, title, fired.text)
        for notifier in self.notifiers:  # a webhook may take seconds: not on the loop
            await asyncio.to_thread(notifier.send, title, fired.text)

    async def serve(
        self,
        stop: asyncio.Event,
        *,
        max_sleep_s: float = 30.0,
        on_fired: Callable[[Fired], None] | None = None,
    ) -> None:
        """Tick until ``stop`` is set, sleeping until the next due time (at most
        ``max_sleep_s``, so jobs added by another process are seen)."""
        while not stop.is_set():
            wake = None
            try:
                for fired in await self.tick():
                    if on_fired is not None:
                        on_fired(fired)
                if self.idle is not None:
                    await self.idle.tick()
                wake = self.store.next_wake()
            except Exception:  # a busy or damaged database: logged, tried again next time
                _log.exception("scheduler tick failed")
            pause = max_sleep_s if wake is None else min(max_sleep_s, wake - self.clock())
            try:
                await asyncio.wait_for(stop.wait(), timeout=max(0.05, pause))
            except TimeoutError:
                pass
