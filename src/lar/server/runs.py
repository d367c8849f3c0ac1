"""A server run: its event log, replayed to every consumer that follows it (A1).

Each run's events (the loop's typed events as JSON, and the server's own ``waiting_user`` and
``approval`` events) are appended to one log; the OpenAI stream, Lar's SSE stream and the panel
all read that log, from the start or from where they joined, so nothing is missed and nothing is
computed twice. Logs are bounded: a run keeps at most ``MAX_EVENTS`` (text deltas are merged
first), and the hub forgets the oldest finished runs (their traces stay in lar.db).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["RunLog", "current_run", "RunStatus", "Approving"]

RunStatus = Literal["queued", "running", "waiting_user", "succeeded", "failed", "interrupted"]
Approving = Literal["wait", "allow", "deny"]
"""How a run's calls that need a yes are answered: by a person (``wait``), or all at once."""

MAX_EVENTS = 2000
"""Events kept per run; past it, consecutive text deltas are merged into one."""

current_run: ContextVar[RunLog | None] = ContextVar("lar_current_run", default=None)
"""The run the current task works for (the approver and the engine queue read it)."""


@dataclass
class RunLog:
    id: str
    session: str
    text: str
    created: float = field(default_factory=time.time)
    status: RunStatus = "queued"
    answer: str | None = None
    error: str | None = None
    model: str = ""
    approvals: Approving = "wait"
    events: list[dict[str, Any]] = field(default_factory=list)
    ended: float | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)
    _changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def done(self) -> bool:
        return self.ended is not None

    def publish(self, event: dict[str, Any]) -> None:
        if (
            len(self.events) >= MAX_EVENTS
            and event.get("type") == "text_delta"
            and self.events[-1].get("type") == "text_delta"
        ):
            last = self.events[-1]
            self.events[-1] = {**last, "text": last["text"] + event["text"]}
        else:
            self.events.append(event)
        self._wake()

    def set_status(self, status: RunStatus) -> None:
        self.status = status
        self._wake()

    def finish(
        self, status: RunStatus, *, answer: str | None = None, error: str | None = None
    ) -> None:
        self.status = status
        self.answer = answer
        self.error = error
        self.ended = time.time()
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def follow(
        self, start: int = 0, *, idle_s: float = 15.0
    ) -> AsyncIterator[dict[str, Any] | None]:
        """Events from index ``start`` as they come, until the run ends; ``None`` after
        ``idle_s`` without one (a keep-alive for the stream)."""
        i = start
        while True:
            while i < len(self.events):
                yield self.events[i]
                i += 1
            if self.done:
                return
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), idle_s)
            except TimeoutError:
                yield None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session": self.session,
            "request": self.text,
            "status": self.status,
            "model": self.model,
            "approvals": self.approvals,
            "created": self.created,
            "ended": self.ended,
            "answer": self.answer,
            "error": self.error,
            "events": len(self.events),
        }
