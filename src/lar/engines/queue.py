"""Many sessions, one model: calls to an engine wait their turn in arrival order (``lar serve``).

llama.cpp's embedded server runs one request at a time (one slot); several sessions of one server
process would otherwise race for it with no order and no way to see who waits. ``QueuedEngine``
admits at most ``slots`` calls at once and the rest in arrival order. A session's next call joins
the back of the queue, so sessions take turns call by call: a run with many tool turns cannot
starve a one-line question. ``waiting()`` shows who waits and where.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from lar.engines.base import Engine, StreamChunk
from lar.types import Message, ModelResponse, ToolSpec

__all__ = ["QueuedEngine", "queue_label", "Waiting"]

queue_label: ContextVar[str] = ContextVar("lar_queue_label", default="")
"""Who a call is for (the server sets the run id), as ``waiting()`` shows it."""

_tickets = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Waiting:
    engine: str
    label: str
    position: int
    """0: being served; 1: next; …"""


class QueuedEngine(Engine):
    """``engine`` behind a first-come, first-served gate of ``slots`` concurrent calls."""

    inner: Engine

    def __init__(self, engine: Engine, *, slots: int | None = None) -> None:
        self.inner = engine
        self.name = engine.name
        self.model = engine.model
        self.kind = engine.kind
        self.prompt_cache = engine.prompt_cache
        self.context_size = engine.context_size
        self.slots = slots or getattr(engine, "slots", None) or 1_000_000
        """Calls served at once: the engine's own ``slots`` (llama.cpp: 1), else no limit."""
        self._serving: list[tuple[int, str]] = []
        self._queue: deque[tuple[int, str, asyncio.Future[None]]] = deque()

    def __repr__(self) -> str:
        return f"QueuedEngine({self.inner!r}, slots={self.slots})"

    def waiting(self) -> list[Waiting]:
        served = [Waiting(self.name, label, 0) for _, label in self._serving]
        queued = [Waiting(self.name, label, i + 1) for i, (_, label, _) in enumerate(self._queue)]
        return served + queued

    async def _enter(self) -> int:
        ticket = next(_tickets)
        label = queue_label.get()
        if len(self._serving) < self.slots and not self._queue:
            self._serving.append((ticket, label))
            return ticket
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (ticket, label, turn)
        self._queue.append(entry)
        try:
            await turn
        except BaseException:
            if entry in self._queue:
                self._queue.remove(entry)
            elif turn.done() and not turn.cancelled():
                self._leave(ticket)  # admitted just as it was cancelled: pass the turn on
            raise
        return ticket

    def _leave(self, ticket: int) -> None:
        self._serving = [s for s in self._serving if s[0] != ticket]
        while self._queue and len(self._serving) < self.slots:
            t, label, turn = self._queue.popleft()
            if turn.done():  # cancelled while waiting
                continue
            self._serving.append((t, label))
            turn.set_result(None)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        ticket = await self._enter()
        try:
            async for chunk in self.inner.stream(messages, tools, **params):
                yield chunk
        finally:
            self._leave(ticket)

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        ticket = await self._enter()
        try:
            return await self.inner.generate(messages, tools, **params)
        finally:
            self._leave(ticket)

    async def count_tokens(self, texts: Sequence[str]) -> list[int] | None:
        return await self.inner.count_tokens(texts)  # llama.cpp tokenizes outside its slots

    async def load(self) -> None:
        load = getattr(self.inner, "load", None)
        if load is not None:
            await load()

    async def aclose(self) -> None:
        await self.inner.aclose()
