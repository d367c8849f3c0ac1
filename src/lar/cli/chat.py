"""``lar chat``: streaming conversation with confirmations and slash commands (A6, first part)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from lar.cli.render import StagedLog, console_err, print_error, short
from lar.errors import LarError
from lar.tools import Changes, ToolContext
from lar.types import (
    Final,
    Message,
    RunStarted,
    TextDelta,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    call_text,
)

__all__ = ["ChatSession"]

HELP = (
    "/reset          forget this conversation\n"
    "/model [NAME]   show or switch the model (keeps the conversation)\n"
    "/btw QUESTION   a side question; the conversation does not see it\n"
    "/skills         the installed skills, enabled or not\n"
    "/trace [ID]     the last run (or run ID): route, model and tool calls, sub-agents\n"
    "/memory [QUERY] what memory holds (its index), or what it recalls for QUERY\n"
    "/resume [ID]    continue an interrupted task (default: the latest)\n"
    "/exit           leave (Ctrl-D works too)"
)


class ChatSession:
    how_to_allow = "answer y when Lar asks, or start lar chat with --yes"
    """Said in an answer after a refused call (lar.agents.answers)."""

    def __init__(
        self,
        *,
        make_agent: Callable[[str | None, Any, Any], Any],
        model: str | None,
        auto_yes: bool = False,
        console: Console | None = None,
    ) -> None:
        self.make_agent = make_agent
        self.model = model
        self.auto_yes = auto_yes
        self.out = console or Console(highlight=False, soft_wrap=True)
        self.history: list[Message] = []
        self.last_run: str | None = None
        self.agent = self.make_agent(model, self.approve, self.ask)

    def approve(self, call: ToolCall, tool: Any, changes: Changes | None = None) -> bool:
        """Asked before a confirm tool runs, or, with ``changes``, after a code or shell run
        on a copy of the workspace: then a yes applies what it changed."""
        if self.auto_yes:
            return True
        what = escape(short(call_text(call.name, call.arguments), 400))
        if changes is None:
            self.out.print(f"\n[bold yellow]{escape(tool.name)}[/bold yellow] wants to run: {what}")
        else:
            self.out.print(
                f"\n[bold yellow]{escape(tool.name)}[/bold yellow] ran on a copy of the "
                f"workspace: {what}\nIt {escape(changes.summary(limit=20))}."
            )
        if tool.danger is not None:
            ctx = ToolContext(workspace=self.agent.workspace)
            for reason in tool.danger(call.arguments, ctx).reasons:
                self.out.print(f"[bold red]warning:[/bold red] {escape(reason)}")
        try:
            answer = input("Allow? [y/N] " if changes is None else "Apply? [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")

    def ask(self, question: str) -> str | None:
        self.out.print(f"\n[bold]lar asks:[/bold] {escape(question)}")
        try:
            return input("> ")
        except EOFError:
            return None

    def consolidate_earlier(self) -> None:
        """Earlier conversations idle for 5 minutes become summaries, facts and archives (M5)."""
        from lar.memory import due_sessions

        memory = getattr(self.agent, "memory", None)
        if memory is None or not due_sessions(memory):
            return
        self.out.print("[dim]memory: consolidating earlier conversations… (Ctrl-C skips)[/dim]")
        try:
            for c in self.agent.consolidate():
                self.out.print(
                    f"[dim]memory: {c.turns} turns → {len(c.facts)} facts, "
                    f"archived in {escape(c.archive)}[/dim]"
                )
        except KeyboardInterrupt:
            self.out.print("[dim]skipped; `lar memory consolidate` does it later[/dim]")
        except LarError as exc:
            print_error(exc)

    def command(self, line: str) -> bool:
        """Handle a slash command; False means leave."""
        cmd, _, arg = line.partition(" ")
        if cmd in ("/exit", "/quit"):
            return False
        if cmd == "/reset":
            self.history.clear()
            self.agent.session().reset()
            self.out.print("[dim]conversation cleared[/dim]")
        elif cmd == "/model":
            if arg.strip():
                try:
                    agent = self.make_agent(arg.strip(), self.approve, self.ask)
                except LarError as exc:
                    print_error(exc)
                    return True
                self.agent.close()
                self.agent, self.model = agent, arg.strip()
            now = self.agent.session()
            self.out.print(f"[dim]model: {escape(now.engine.name)} ({now.track} track)[/dim]")
        elif cmd == "/btw":
            if not arg.strip():
                self.out.print("usage: /btw QUESTION")
            else:
                # A copy: the side exchange is seen by neither the next turn nor the task,
                # and memory keeps it out of the conversation's summary.
                self.show(self.agent.stream(arg.strip(), history=list(self.history), aside=True))
        elif cmd == "/resume":
            self.resume(arg.strip() or None)
        elif cmd in ("/skills", "/trace", "/memory"):
            from lar.cli import chat_views

            show = {
                "/skills": chat_views.skills,
                "/trace": chat_views.trace,
                "/memory": chat_views.memory,
            }[cmd]
            show(self, arg.strip())
        elif cmd == "/help":
            self.out.print(HELP)
        else:
            self.out.print(f"unknown command {escape(cmd)}; try /help")
        return True

    def resume(self, task_id: str | None) -> None:
        store = self.agent.runner.tasks
        if store is None:
            self.out.print("no task store: resuming is not available")
            return
        if task_id is None:
            open_tasks = [t for t in store.list(50) if t.status not in ("succeeded", "failed")]
            if not open_tasks:
                self.out.print("no interrupted task to resume")
                return
            task_id = open_tasks[0].id
        self.out.print(f"[dim]resuming {escape(task_id)}[/dim]")
        self.show(self.agent.resume(task_id))
        self.history, _ = store.load_checkpoint(task_id)

    def turn(self, text: str) -> None:
        self.show(self.agent.stream(text, history=self.history))

    def show(self, events: Any) -> None:
        log = StagedLog(console=console_err())
        streamed = False
        status = self.out.status("thinking…", spinner="dots")
        status.start()
        open_line = False  # streamed text not yet ended by a newline
        said = ""  # the streamed text, before the answer check (lar.agents.answers)
        try:
            for event in events:
                if isinstance(event, RunStarted):
                    self.last_run = event.run_id
                if isinstance(event, TextDelta):
                    status.stop()
                    self.out.print(event.text, end="", markup=False)
                    streamed, open_line = True, not event.text.endswith("\n")
                    said += event.text
                    continue
                if open_line and not isinstance(event, Final):
                    self.out.print()  # the answer on its own line, not run into a log line
                    open_line = False
                if isinstance(event, ToolCallStarted):
                    status.stop()
                    shown = short(call_text(event.call.name, event.call.arguments))
                    self.out.print(f"[dim]→ {escape(shown)}[/dim]")
                elif isinstance(event, ToolCallFinished):
                    mark = "ok" if event.result.ok else "failed"
                    self.out.print(f"[dim]← {mark}: {escape(short(event.result.content))}[/dim]")
                    status.start()
                elif isinstance(event, Final):
                    status.stop()
                    if not streamed:
                        self.out.print(event.text, markup=False, end="")
                    if open_line or not streamed:
                        self.out.print()
                    if streamed and event.text.strip() != said.strip():
                        self._checked(said.strip(), event.text.strip())
                    log.handle(event)
                else:
                    log.handle(event)
        finally:
            status.stop()

    def _checked(self, streamed: str, final: str) -> None:
        """The answer check changed what was streamed: show what it added (a refused call's
        account), or the whole checked answer when it cut something."""
        if final.startswith(streamed):
            self.out.print(final[len(streamed) :].strip(), markup=False)
        else:
            self.out.print("[dim](the answer as checked:)[/dim]")
            self.out.print(final, markup=False)

    def loop(self) -> None:
        self.out.print(
            f"[bold]Lar[/bold] chat · model {escape(self.agent.engine.name)} · /help for commands"
        )
        self.consolidate_earlier()
        while True:
            try:
                line = input("you> ").strip()
            except (EOFError, KeyboardInterrupt):
                self.out.print()
                break
            if not line:
                continue
            try:
                if line.startswith("/"):
                    if not self.command(line):
                        break
                    continue
                self.turn(line)
            except KeyboardInterrupt:
                self.out.print("\n[dim]interrupted; /resume continues the task[/dim]")
            except LarError as exc:
                print_error(exc)
        self.agent.close()
