"""Approvals over HTTP (T9): a ``confirm`` call in a server run waits for a person's answer.

The run's task goes to ``waiting_user`` and its stream says what waits (tool, arguments, danger
warnings, what a staged run would change); ``POST /api/approvals/{id}`` answers it. No answer
within ``server.approval_timeout_s`` is a no: the call is denied and the model is told, as after
any refusal. Nothing is ever approved by default.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lar.server.runs import RunLog, current_run

__all__ = ["Approval", "Approvals", "ApprovalClosed"]

Decision = Literal["approved", "denied", "timeout"]


class ApprovalClosed(Exception):
    """The approval was answered already, or timed out."""


@dataclass
class Approval:
    id: str
    run: str
    session: str
    tool: str
    arguments: dict[str, Any]
    reasons: list[str]
    changes: str | None
    created: float
    deadline: float
    decision: Decision | None = None
    _answer: asyncio.Future[bool] | None = field(default=None, repr=False)

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "run": self.run,
            "session": self.session,
            "tool": self.tool,
            "arguments": self.arguments,
            "reasons": self.reasons,
            "changes": self.changes,
            "created": self.created,
            "deadline": self.deadline,
            "decision": self.decision,
        }


class Approvals:
    """Every approval of this server process, pending first."""

    def __init__(
        self,
        timeout_s: float,
        *,
        mask: Callable[[Any], Any] = lambda v: v,
        on_wait: Callable[[RunLog, bool], None] | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self._mask = mask
        self._on_wait = on_wait
        self._all: dict[str, Approval] = {}

    def pending(self) -> list[Approval]:
        return [a for a in self._all.values() if a.decision is None]

    def get(self, approval_id: str) -> Approval:
        return self._all[approval_id]

    def answer(self, approval_id: str, approve: bool) -> Approval:
        """KeyError: no such approval; ApprovalClosed: answered or timed out already."""
        approval = self._all[approval_id]
        if approval.decision is not None or approval._answer is None:
            raise ApprovalClosed(f"approval {approval_id} is closed ({approval.decision})")
        if not approval._answer.done():
            approval._answer.set_result(approve)
        approval.decision = "approved" if approve else "denied"
        return approval

    async def approver(
        self, call: Any, tool: Any, *, changes: Any = None, reasons: list[str] | None = None
    ) -> bool:
        """The executor's approver for server sessions (lar.tools.executor.Approver)."""
        run = current_run.get()
        if run is None:  # not a server run (cannot happen through the hub): refuse
            return False
        if run.approvals != "wait":  # the client answered for the whole run (lar run --yes)
            decision = "approved" if run.approvals == "allow" else "denied"
            run.publish({"type": "approval", "id": None, "tool": tool.name, "decision": decision})
            return run.approvals == "allow"
        now = time.time()
        approval = Approval(
            id="a_" + secrets.token_hex(6),
            run=run.id,
            session=run.session,
            tool=tool.name,
            arguments=self._mask(dict(call.arguments)),
            reasons=self._mask(list(reasons or [])),
            changes=self._mask(changes.summary(limit=20)) if changes is not None else None,
            created=now,
            deadline=now + self.timeout_s,
            _answer=asyncio.get_running_loop().create_future(),
        )
        self._all[approval.id] = approval
        self._trim()
        run.publish({"type": "waiting_user", "approval": approval.view()})
        if self._on_wait is not None:
            self._on_wait(run, True)
        assert approval._answer is not None
        try:
            allowed = await asyncio.wait_for(asyncio.shield(approval._answer), self.timeout_s)
        except TimeoutError:
            approval.decision, allowed = "timeout", False
        finally:
            if approval.decision is None:  # the run was stopped while it waited
                approval.decision = "denied"
            if self._on_wait is not None:
                self._on_wait(run, False)
        run.publish({"type": "approval", "id": approval.id, "decision": approval.decision})
        return allowed

    def _trim(self, keep: int = 500) -> None:
        closed = [k for k, a in self._all.items() if a.decision is not None]
        for key in closed[: max(0, len(self._all) - keep)]:
            del self._all[key]
