"""Printing a non-interactive run's events: the answer on stdout (or JSON lines), a staged log
on stderr, and the exit code; Ctrl-C or SIGTERM stop the run cleanly."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import typer

from lar.cli.render import StagedLog, console_err
from lar.errors import RunInterrupted

__all__ = ["consume", "stop_on_signals"]


class stop_on_signals:  # noqa: N801 - a context manager that reads like a function
    """Ctrl-C or SIGTERM stops the run cleanly (the task stays resumable, exit 130); a second
    signal exits at once."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.signals = 0
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: object) -> None:
        self.signals += 1
        if self.signals > 1:
            os.write(2, b"\nstopped\n")
            os._exit(130)
        os.write(2, b"\ninterrupting (again to stop at once)\n")
        self.agent.interrupt()

    def __enter__(self) -> stop_on_signals:
        import signal

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def consume(agent: Any, events: Any, *, json_out: bool, quiet: bool) -> None:
    """Print a run's events (stdout: answer or JSON lines; stderr: staged log) and exit with
    0 answered, 1 error, 3 stopped without an answer."""
    from lar.types import Final, event_to_json

    log = StagedLog(enabled=not quiet)
    final: Final | None = None
    try:
        with stop_on_signals(agent):
            for event in events:
                if json_out:
                    sys.stdout.write(event_to_json(event) + "\n")
                    sys.stdout.flush()
                log.handle(event)
                if isinstance(event, Final):
                    final = event
    except RunInterrupted as exc:
        console_err().print(str(exc))
        raise typer.Exit(130) from None
    except KeyboardInterrupt:
        console_err().print("interrupted; continue with `lar resume ID` (see `lar tasks`)")
        raise typer.Exit(130) from None
    finally:
        agent.close()
    if final is None or final.stop_reason == "error":
        raise typer.Exit(1)
    if not json_out:
        typer.echo(final.text)
    if final.stop_reason != "answer":
        raise typer.Exit(3)
