"""Staged log lines (O5) on stderr, built from the event stream."""

from __future__ import annotations

from functools import cache
from typing import Any

from rich.console import Console
from rich.markup import escape

from lar.errors import ConfigError, LarError
from lar.types import (
    ContextCompressed,
    ErrorEvent,
    Event,
    Final,
    MemoryRecalled,
    MemoryWritten,
    ModelCalled,
    Notice,
    Routed,
    RunStarted,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    call_text,
)

__all__ = ["StagedLog", "console_err", "print_error", "short", "model_progress", "exit_code"]


@cache
def console_err() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_error(exc: BaseException | str) -> None:
    console_err().print(f"[bold red]error:[/bold red] {escape(str(exc))}")


def short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class StagedLog:
    """O5 lines: ``llm: model, prompt 193 tokens, 1 tool_call, 3685ms``, ``tool: add(a=1) ok, 1ms``,
    ``done. total tokens 650, latency 9232ms``."""

    def __init__(self, *, enabled: bool = True, console: Console | None = None) -> None:
        self.enabled = enabled
        self.console = console or console_err()
        self.calls: dict[str, ToolCall] = {}

    def line(self, text: str) -> None:
        if self.enabled:
            self.console.print(f"[dim]{escape(text)}[/dim]")

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.line(f"task: {event.run_id} ({event.model}, {event.track} track)")
        elif isinstance(event, Routed):
            if event.router != "fixed":
                self.line(f"route: {event.model} ({event.router}: {event.reason})")
        elif isinstance(event, ModelCalled):
            n = event.tool_calls
            energy = f", {event.energy_j:.1f} J" if event.energy_j is not None else ""
            self.line(
                f"llm: {event.model}, prompt {event.usage.prompt_tokens} tokens, "
                f"{n} tool_call{'' if n == 1 else 's'}, {event.timings.latency_ms:.0f}ms{energy}"
            )
        elif isinstance(event, ToolCallStarted):
            self.calls[event.call.id] = event.call
        elif isinstance(event, ToolCallFinished):
            r = event.result
            call = self.calls.get(r.call_id)
            shown = short(call_text(call.name, call.arguments), 100) if call else r.name
            status = "ok" if r.ok else f"{r.error.code if r.error else 'error'}"
            self.line(f"tool: {shown} {status}, {event.duration_ms:.0f}ms")
        elif isinstance(event, Notice):
            self.line(f"note: {event.message}")
        elif isinstance(event, MemoryRecalled):
            # O5: "recall: 3 memories, top 0.82, 12ms" (top: cosine, or the fused score)
            n = len(event.items)
            top = ""
            if event.items:
                first = event.items[0]
                best = first["cosine"] if first.get("cosine") is not None else first["score"]
                top = f", top {best:.2f} ({first['id']})"
            noun = "memory" if n == 1 else "memories"
            self.line(f"recall: {n} {noun}{top}, {event.duration_ms:.0f}ms")
        elif isinstance(event, MemoryWritten):
            target = f" {event.memory_id}" if event.memory_id else ""
            why = f": {event.reason}" if event.reason else ""
            self.line(f"memory: {event.action}{target} {short(event.content, 80)!r}{why}")
        elif isinstance(event, ContextCompressed):
            self.line(
                f"context: {event.part} {event.before} → {event.after} tokens"
                + (f" ({event.detail})" if event.detail else "")
            )
        elif isinstance(event, ErrorEvent):
            self.console.print(f"[bold red]error:[/bold red] {escape(event.message)}")
        elif isinstance(event, Final):
            self.line(
                f"done. total tokens {event.usage.total_tokens}, latency {event.latency_ms:.0f}ms"
            )


class model_progress:  # noqa: N801 - used as a context manager, reads like a function
    """A rich progress bar for the first-run assembly of the default model (stderr)."""

    def __init__(self, quiet: bool, what: str = "the default model") -> None:
        self.quiet = quiet
        self.what = what
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Any:
        return None if self.quiet else self.update

    def update(self, done: int, total: int) -> None:
        if self.bar is None:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn(f"assembling {self.what}"),
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=console_err(),
            )
            self.bar.start()
            self.task = self.bar.add_task("model", total=total)
        self.bar.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def exit_code(exc: LarError) -> int:
    """2 for a bad configuration, 1 for any other failure."""
    return 2 if isinstance(exc, ConfigError) else 1
