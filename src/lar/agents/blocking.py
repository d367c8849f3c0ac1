"""Driving an async event stream from blocking code, one step at a time (``Session.run`` and
``stream``), so that Ctrl-C, a signal handler or another thread can stop it cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

from lar.engines.base import exclusive_loop
from lar.errors import RunInterrupted
from lar.types import Event, RunStarted

__all__ = ["Stepper", "offload"]

T = TypeVar("T")


async def offload(fn: Callable[..., T], /, *args: Any) -> T:
    """``fn(*args)`` (SQLite, recall) on a worker thread, so that other sessions on the loop go
    on meanwhile; inline when the run owns its loop (``Session.run``: nothing else waits)."""
    if exclusive_loop.get():
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


class Stepper:
    """Each step of the stream is a task on the loop; ``interrupt`` cancels the current one."""

    def __init__(self) -> None:
        self._step: asyncio.Task[Event] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._interrupted = False
        self._run_id = ""

    def iterate(
        self, loop: asyncio.AbstractEventLoop, agen: AsyncIterator[Event]
    ) -> Iterator[Event]:
        self._loop = loop
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
        self._interrupted = True
        step, loop = self._step, self._loop
        if step is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(step.cancel)


async def _aclose(agen: AsyncIterator[Event]) -> None:
    close = getattr(agen, "aclose", None)
    if close is not None:
        await close()
