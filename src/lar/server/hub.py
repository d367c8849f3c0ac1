"""One process, many sessions: the runner, the sessions by id, the runs and their event logs.

Every request that runs the agent — OpenAI-compatible, Lar's own API, the panel — goes through
``Hub.start``: a run is an asyncio task that reads the session's event stream into a ``RunLog``
that any number of consumers follow. Runs of one session take turns (a conversation has one
order); runs of different sessions interleave, and their model calls queue fairly on the engine
(lar.engines.queue).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.redact import Redactor, mask_strings
from lar.server.approvals import Approvals
from lar.server.runs import Approving, RunLog, current_run
from lar.types import ErrorEvent, Final, Message, RunStarted, to_dict

if TYPE_CHECKING:
    from lar.agents import Agent, Runner, Session
    from lar.config import LarConfig
    from lar.engines import Engine
    from lar.mcp import McpServers
    from lar.tools import Tool

__all__ = ["Hub"]

KEEP_RUNS = 200
"""Finished runs kept in memory for the panel and late followers (all stay in lar.db's traces)."""


class Hub:
    def __init__(
        self,
        config: LarConfig,
        *,
        engine: Engine | None = None,
        tools: list[Tool] | None = None,
        memory: bool = True,
        workspace: str | Path | None = None,
    ) -> None:
        from lar.agents import Agent, Runner, TaskStore

        self.mcp: McpServers | None = None
        """The configured MCP servers whose tools the agent has (closed with the hub)."""
        self.config = config
        self.redactor = Redactor(config.secrets())
        self.tasks = TaskStore(config.home / "lar.db", redact=self.redactor.text)
        self.runner: Runner = Runner(
            config=config, engine=engine, tasks=self.tasks, memory=memory, queued=True
        )
        if tools is None:
            from lar.agents import gather_tools

            found = gather_tools(config)
            self.mcp, tools = found.mcp, found.tools
            for note in found.notes:
                logging.getLogger("lar.server").warning("%s", note)
        self.agent: Agent = Agent(tools=tools)
        self.workspace = workspace
        self.approvals = Approvals(
            config.server.approval_timeout_s, mask=self.mask, on_wait=self._waiting
        )
        self.hidden: dict[str, str] = {}
        """Tools not offered because a capability they need is unavailable → why."""
        self._sessions: OrderedDict[tuple[str, str, str, str], Session] = OrderedDict()
        self._turns: dict[str, asyncio.Lock] = {}
        self.runs: OrderedDict[str, RunLog] = OrderedDict()
        self.started = time.time()
        self._jobs: asyncio.Task[None] | None = None
        self._jobs_stop = asyncio.Event()

    def start_jobs(self) -> None:
        """Fire scheduled jobs (and idle mode, when on) while the server runs (I4)."""
        from lar.agents import JobRunner
        from lar.scheduler import JobStore

        store = JobStore(self.config.home / "lar.db", by=f"lar serve (pid {os.getpid()})")
        jobs = JobRunner.for_config(
            self.config,
            store,
            agent=self.agent,
            runner=self.runner,
        )  # a request job works in its own folder (Job.folder), not the server's
        log = logging.getLogger("lar.server")

        def fired(f: Any) -> None:
            log.info("job %s %s", f.job.id, f.state)

        self._jobs = asyncio.get_running_loop().create_task(
            jobs.serve(self._jobs_stop, on_fired=fired)
        )

    def workspace_roots(self) -> list[Path]:
        """The folders runs may work in: the server's own and ``server.workspaces``."""
        own = Path(self.workspace) if self.workspace else Path.cwd()
        return [own.resolve(), *(Path(f).resolve() for f in self.config.server.workspaces)]

    def allows_workspace(self, folder: Path) -> bool:
        """Whether ``folder`` (symlinks resolved) is one of, or inside, the workspace roots."""
        real = folder.resolve()
        return any(real == root or real.is_relative_to(root) for root in self.workspace_roots())

    def mask(self, value: Any) -> Any:
        """``value`` with every configured secret masked (every response passes here)."""
        return mask_strings(value, self.redactor.text)

    # --- sessions ----------------------------------------------------------------------------

    def session(
        self, session_id: str, *, system: str = "", model: str = "", workspace: str = ""
    ) -> Session:
        """The conversation ``session_id`` (a client's own system prompt, model or workspace
        makes a variant of it; all variants share the session's memory)."""
        key = (session_id, system, model, workspace)
        found = self._sessions.get(key)
        if found is not None:
            self._sessions.move_to_end(key)
            return found
        agent = self.agent
        if system:
            agent = agent.replace(system_prompt=system)
        if self.hidden:
            from lar.agents import DEFAULT_SYSTEM_PROMPT

            # narrows the allowlist in force (the agent's, else config's); never widens it
            limit = agent.allowlist if agent.allowlist is not None else self.config.tools.allowlist
            allowed = [
                t.name
                for t in agent.tools
                if t.name not in self.hidden and (limit is None or t.name in limit)
            ]
            base = agent.system_prompt or self.config.agent.system_prompt or DEFAULT_SYSTEM_PROMPT
            notice = "; ".join(f"{t}: {why}" for t, why in sorted(self.hidden.items()))
            agent = agent.replace(
                allowlist=allowed, system_prompt=f"{base}\nNot available now: {notice}."
            )
        session = self.runner.session(
            agent,
            session_id=session_id,
            workspace=workspace or self.workspace,
            approver=self.approvals.approver,
            model=model or None,
        )
        self._sessions[key] = session
        while len(self._sessions) > self.config.server.max_sessions:
            _, old = self._sessions.popitem(last=False)
            old.close()
        return session

    def reset(self, session_id: str) -> int:
        """Forget ``session_id``'s conversation state (its memories stay); how many variants."""
        keys = [k for k in self._sessions if k[0] == session_id]
        for key in keys:
            session = self._sessions.pop(key)
            session.reset()
            session.close()
        return len(keys)

    def hide(self, reasons: dict[str, str]) -> None:
        """Stop offering these tools (capability down); sessions made from now on lack them."""
        if reasons != self.hidden:
            self.hidden = dict(reasons)
            for session in self._sessions.values():
                session.close()
            self._sessions.clear()

    # --- runs --------------------------------------------------------------------------------

    def start(
        self,
        text: str,
        *,
        session_id: str | None = None,
        history: list[Message] | None = None,
        system: str = "",
        model: str = "",
        workspace: str = "",
        approvals: Approving | None = None,
    ) -> RunLog:
        """Start a run now (it waits behind the session's previous one); follow its log.
        ``workspace``: the folder its tools work in (default: the server's); ``approvals``:
        default the owner's ``server.approvals``."""
        sid = session_id or "s_" + secrets.token_hex(6)
        run = RunLog(id="t_" + secrets.token_hex(6), session=sid, text=self.redactor.text(text))
        run.approvals = approvals or self.config.server.approvals
        self.runs[run.id] = run
        self._trim()
        variant = (system, model, workspace)
        run.task = asyncio.create_task(
            self._drive(run, text, list(history or []), variant), name=f"lar-run-{run.id}"
        )
        return run

    def stop(self, run_id: str) -> bool:
        """Stop a run at its next step (its task stays resumable); False if it had ended."""
        run = self.runs[run_id]
        if run.task is None or run.task.done():
            return False
        run.task.cancel()
        return True

    def resume(self, task_id: str, session_id: str | None = None) -> RunLog:
        record = self.tasks.get(task_id)  # TaskNotFound → 404
        sid = session_id or "s_" + secrets.token_hex(6)
        run = RunLog(id=task_id, session=sid, text=record.request)
        self.runs[run.id] = run
        run.task = asyncio.create_task(
            self._drive(run, None, [], ("", "", "")), name=f"lar-resume-{task_id}"
        )
        return run

    async def _drive(
        self,
        run: RunLog,
        text: str | None,
        history: list[Message],
        variant: tuple[str, str, str],
    ) -> None:
        from lar.engines import queue_label

        current_run.set(run)
        queue_label.set(run.id)
        turn = self._turns.setdefault(run.session, asyncio.Lock())
        async with turn:
            system, model, workspace = variant
            session = self.session(run.session, system=system, model=model, workspace=workspace)
            run.set_status("running")
            try:
                if text is None:
                    events = session.aresume(run.id)
                else:
                    events = session.astream(text, history=history, run_id=run.id)
                final: Final | None = None
                error: str | None = None
                async for event in events:
                    if isinstance(event, RunStarted):
                        run.model = event.model
                    elif isinstance(event, Final):
                        final = event
                    elif isinstance(event, ErrorEvent):
                        error = event.message
                    run.publish(to_dict(event))  # masked by the session already
            except asyncio.CancelledError:
                run.finish("interrupted", error="stopped")
                raise
            except Exception as exc:  # a bug or a broken store: the run fails, the server stays
                message = self.redactor.text(f"{type(exc).__name__}: {exc}")
                told = self.redactor.text("".join(traceback.format_exception(exc)))
                logging.getLogger("lar.server").error("run %s failed: %s", run.id, told)
                run.publish({"type": "error", "code": "server_error", "message": message})
                run.finish("failed", error=message)
                return
        if final is None or final.stop_reason == "error":
            run.finish("failed", error=error or "the run ended without an answer")
        else:
            run.finish("succeeded", answer=final.text)

    def _waiting(self, run: RunLog, waiting: bool) -> None:
        run.set_status("waiting_user" if waiting else "running")
        try:
            self.tasks.set_status(run.id, "waiting_user" if waiting else "running")
        except Exception:  # noqa: BLE001 - the status line is advisory; the run goes on
            pass

    def _trim(self) -> None:
        if len(self.runs) < KEEP_RUNS + 50:  # trimmed in batches: a scan per run costs
            return
        finished = [k for k, r in self.runs.items() if r.done]
        for key in finished[: max(0, len(self.runs) - KEEP_RUNS)]:
            del self.runs[key]

    def status(self) -> dict[str, Any]:
        """What runs, what waits for the model, what waits for a person."""
        from lar.engines import QueuedEngine

        queue = []
        for engine in self.runner.engines():
            if isinstance(engine, QueuedEngine):
                queue += [
                    {"engine": w.engine, "run": w.label, "position": w.position}
                    for w in engine.waiting()
                ]
        live = [r.summary() for r in self.runs.values() if not r.done]
        return {
            "running": [r for r in live if r["status"] == "running"],
            "queued": queue,
            "waiting": [a.view() for a in self.approvals.pending()],
            "sessions": len({k[0] for k in self._sessions}),
            "workspaces": [str(root) for root in self.workspace_roots()],
            "uptime_s": round(time.time() - self.started, 1),
        }

    async def aclose(self) -> None:
        if self._jobs is not None:
            self._jobs_stop.set()
            self._jobs.cancel()
        for run in list(self.runs.values()):
            if run.task is not None and not run.task.done():
                run.task.cancel()
        for session in self._sessions.values():
            session.close()
        self._sessions.clear()
        await self.runner.aclose()
        self.tasks.close()
        if self.mcp is not None:
            await asyncio.to_thread(self.mcp.close)
