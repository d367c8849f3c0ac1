"""The ``lar`` command line (I1): run, chat, model."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from lar import __version__
from lar.cli.agent import make_agent, make_agent_or_exit
from lar.cli.batch import batch
from lar.cli.consume import consume as _consume
from lar.cli.evals import eval_command
from lar.cli.mcp import mcp_app
from lar.cli.memory import memory_app
from lar.cli.models import model_app
from lar.cli.options import WorkspaceOpt
from lar.cli.render import console_err, exit_code, print_error, short
from lar.cli.role import evidence, role_app
from lar.cli.schedule import inbox, schedule_app
from lar.cli.serve import serve
from lar.cli.skills import skill_app
from lar.cli.traces import feedback, learn, stats, trace_app
from lar.cli.undo import undo
from lar.errors import LarError

__all__ = ["app"]

app = typer.Typer(
    name="lar",
    help="Lar: a local-first personal AI agent. Everything runs on this machine by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(model_app, name="model")
app.add_typer(memory_app, name="memory", no_args_is_help=True)
app.add_typer(trace_app, name="trace", no_args_is_help=True)
app.add_typer(skill_app, name="skill", no_args_is_help=True)
app.add_typer(schedule_app, name="schedule", no_args_is_help=True)
app.add_typer(mcp_app, name="mcp", no_args_is_help=True)
app.add_typer(role_app, name="role", no_args_is_help=True)
app.command()(evidence)
app.command()(serve)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"lar {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Lar: a local-first personal AI agent."""


ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="A model name from config.yaml (default: the embedded one)."
    ),
]
TrackOpt = Annotated[
    str | None,
    typer.Option(help="Tool-calling track: auto, native, protocol or constrained."),
]
KindOpt = Annotated[
    str | None,
    typer.Option(
        help="How the run goes: loop (default), simple, codeact, operative, delegate, react, "
        "native (default: agent.kind in config.yaml)."
    ),
]
NoMemoryOpt = Annotated[
    bool,
    typer.Option(
        "--no-memory",
        help="Neither recall nor store memories (the agent still sees this conversation).",
    ),
]


LocalOpt = Annotated[
    bool, typer.Option("--local", help="Run here even when `lar serve` is running.")
]


def _remote(workspace: Path | None, model: str | None, approvals: Any, quiet: bool) -> Any:
    from lar.cli.remote import remote_agent

    try:
        return remote_agent(workspace=workspace, model=model, approvals=approvals, quiet=quiet)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None


class _DenyAll:
    """``lar run`` without ``--yes``: every call that needs a yes is refused, and the answer
    says how to give one."""

    how_to_allow = "run the request again with --yes, or use lar chat, which asks each time"
    never_allows = True  # code that changes nothing still runs (lar.tools.executor)

    def __call__(self, call: Any, tool: Any) -> bool:
        return False


_deny_all = _DenyAll()


def _allow_all(call: Any, tool: Any) -> bool:
    return True


def _ask_stdin(question: str) -> str | None:
    if not sys.stdin.isatty():
        return None
    console_err().print(f"[bold]lar asks:[/bold] {question}")
    try:
        return input("> ")
    except EOFError:
        return None


@app.command()
def run(
    text: Annotated[str, typer.Argument(help="What you want done.")],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print every event as one JSON line on stdout.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow tools that need confirmation.")
    ] = False,
    model: ModelOpt = None,
    track: TrackOpt = None,
    workspace: WorkspaceOpt = None,
    max_turns: Annotated[int | None, typer.Option(min=1, max=100, help="Turn limit.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No log lines on stderr.")] = False,
    no_memory: NoMemoryOpt = False,
    kind: KindOpt = None,
    urgent: Annotated[
        bool, typer.Option("--urgent", help="Speed first: the router picks the smallest model.")
    ] = False,
    local: LocalOpt = False,
) -> None:
    """Run one request to a final answer: the answer on stdout, progress on stderr.

    Without --model the router picks the model (see `lar trace show ID` for why). Tools that
    change things (file_write, file_patch, code_run) need confirmation: without --yes they are
    denied and the model is told so. When `lar serve` runs, the request goes to it (the model
    is loaded there already); --local, --track, --max-turns, --no-memory, --urgent or --kind
    run it here.
    """
    here = local or track or max_turns or no_memory or urgent or kind
    remote = None if here else _remote(workspace, model, "allow" if yes else "deny", quiet)
    if remote is not None:
        try:
            _consume(remote, remote.stream(text), json_out=json_out, quiet=quiet)
        except LarError as exc:
            print_error(exc)
            raise typer.Exit(exit_code(exc)) from None
        return
    _run_cli(
        lambda agent: agent.stream(text, urgency=1.0 if urgent else 0.0),
        yes=yes,
        json_out=json_out,
        quiet=quiet,
        model=model,
        track=track,
        workspace=workspace,
        max_turns=max_turns,
        memory=not no_memory,
        kind=kind,
    )


def _run_cli(
    events: Any,
    *,
    yes: bool,
    json_out: bool,
    quiet: bool,
    model: str | None = None,
    track: str | None = None,
    workspace: Path | None = None,
    max_turns: int | None = None,
    memory: bool = True,
    kind: str | None = None,
) -> None:
    """Build the agent for a non-interactive command and print what ``events(agent)`` yields."""
    try:
        agent = make_agent(
            model=model,
            track=track,
            workspace=workspace,
            max_turns=max_turns,
            approver=_allow_all if yes else _deny_all,
            ask_user=_ask_stdin,
            quiet=quiet or json_out,
            memory=memory,
            kind=kind,
        )
        _consume(agent, events(agent), json_out=json_out, quiet=quiet)
        learned = agent.session().learned
        if learned is not None and learned.drafted and not (quiet or json_out):
            console_err().print(
                f"learned: a draft skill {learned.name!r} ({learned.steps} steps) from this task; "
                f"review it with `lar skill show {learned.name}`"
            )
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None


@app.command()
def prompt(
    text: Annotated[str, typer.Argument(help="A message, as you would give it to `lar run`.")],
    model: ModelOpt = None,
    track: TrackOpt = None,
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate", help="Estimate tokens (3.5 characters each) instead of loading the model."
        ),
    ] = False,
    no_memory: NoMemoryOpt = False,
) -> None:
    """Show the prompt the model would get for TEXT and how its tokens split.

    Memory is recalled as for a real run, but nothing is stored. Tokens are counted by the
    model's own tokenizer (the model is loaded for that) unless --estimate is given.
    """
    from rich.console import Console
    from rich.rule import Rule
    from rich.table import Table

    agent = make_agent_or_exit(
        model=model, track=track, approver=_deny_all, quiet=True, memory=not no_memory
    )
    try:
        view = agent.preview(text, estimate=estimate)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        agent.close()
    out = Console(highlight=False, soft_wrap=True)
    for m in view.messages:
        out.print(Rule(m.role, align="left"))
        out.print(escape(m.content))
    out.print(Rule())
    table = Table("part", "tokens", "limit", "share")
    from lar.agents import SHARES

    for part, share in SHARES.items():
        table.add_row(part, str(view.tokens[part]), str(view.limits[part]), f"{share:.0%}")
    if "skills" in view.tokens:
        table.add_row("  of the tools: skills", str(view.tokens["skills"]), "", "")
    table.add_row("total (with chat template)", str(view.total), str(view.n_ctx - view.reserve), "")
    out.print(table)
    system_tokens = view.tokens["system"] + view.tokens["tools"] + view.tokens["memory"]
    how = "the model's tokenizer" if view.exact else "estimate (3.5 characters a token)"
    out.print(
        f"system prompt: {system_tokens} tokens (instructions + tools + memory); "
        f"context {view.n_ctx}, {view.reserve} kept for the answer; counted by {how}"
    )
    for e in view.events:
        out.print(f"context: {e.part} {e.before} → {e.after} tokens ({e.detail})")


@app.command()
def resume(
    task_id: Annotated[str, typer.Argument(help="The task to continue (see `lar tasks`).")],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print every event as one JSON line on stdout.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow tools that need confirmation.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No log lines on stderr.")] = False,
) -> None:
    """Continue a task that was interrupted (killed, crashed, Ctrl-C) from its last checkpoint.

    Tool calls that completed before the interruption are not run again.
    """
    _run_cli(lambda agent: agent.resume(task_id), yes=yes, json_out=json_out, quiet=quiet)


@app.command()
def tasks(
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 20,
) -> None:
    """List recent tasks and their states (pending, running, waiting_user, succeeded, failed)."""
    from rich.console import Console

    from lar.agents import TaskStore
    from lar.config import load_config

    try:
        store = TaskStore(load_config().home / "lar.db")
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    from lar.cli.tables import table, when

    listing = table("id", "status", "updated", "request", text="request")
    for t in store.list(limit):
        listing.add_row(t.id, t.status, when(t.updated), escape(short(t.request, 80)))
    store.close()
    Console().print(listing)


@app.command()
def chat(
    model: ModelOpt = None,
    track: TrackOpt = None,
    workspace: WorkspaceOpt = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow confirm-tools without asking.")
    ] = False,
    no_memory: NoMemoryOpt = False,
    kind: KindOpt = None,
    local: LocalOpt = False,
) -> None:
    """Talk with Lar. /help lists the commands: /reset, /model, /btw, /skills, /trace, /memory,
    /resume, /exit.

    When `lar serve` runs, the conversation goes to it (--local, --track, --kind or --no-memory
    keep it here); calls that need a yes are asked here either way.
    """
    from lar.cli.chat import ChatSession
    from lar.cli.remote import remote_agent

    here = local or track or no_memory or kind

    def make(name: str | None, approver: Any, ask: Any) -> Any:
        if not here:
            approvals: Literal["allow", "wait"] = "allow" if yes else "wait"
            found = remote_agent(
                workspace=workspace, model=name, approvals=approvals, confirm=approver
            )
            if found is not None:
                return found
        return make_agent(
            model=name,
            track=track,
            workspace=workspace,
            max_turns=None,
            approver=approver,
            ask_user=ask,
            quiet=False,
            memory=not no_memory,
            kind=kind,
        )

    try:
        ChatSession(
            make_agent=make,
            model=model,
            auto_yes=yes,
        ).loop()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None


@app.command()
def doctor(
    no_write: Annotated[
        bool, typer.Option("--no-write", help="Don't write config.recommended.yaml.")
    ] = False,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Move a damaged lar.db aside (renamed, never deleted) so a new one can start.",
        ),
    ] = False,
) -> None:
    """Show what this machine offers Lar (CPU, memory, GPU, sandbox level, energy collectors,
    models, the database's integrity) and write a config recommended for it to
    $LAR_HOME/config.recommended.yaml. Exits 1 when the database needs repair."""
    from lar.cli.doctor import print_doctor
    from lar.config import load_config

    try:
        healthy = print_doctor(load_config(), write=not no_write, fix=repair)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    if not healthy:
        raise typer.Exit(1)


# After the core commands, so `lar --help` lists run, chat … first.
app.command(context_settings={"ignore_unknown_options": True})(feedback)  # "-1" is a score
app.command()(learn)
app.command()(stats)
app.command("eval")(eval_command)
app.command()(undo)
app.command()(batch)
app.command()(inbox)


def entry() -> None:
    """The ``lar`` command: every known failure is one line and an exit code, never a traceback."""
    import sqlite3

    from lar.config import lar_home

    try:
        app()
    except LarError as exc:
        print_error(exc)
        sys.exit(exit_code(exc))
    except sqlite3.DatabaseError as exc:
        db = lar_home(os.environ) / "lar.db"
        print_error(
            f"{db}: the database cannot be used ({exc}); `lar doctor` checks it and "
            "`lar doctor --repair` moves it aside and starts a new one (the old file is kept)"
        )
        sys.exit(1)
    except KeyboardInterrupt:
        console_err().print("interrupted")
        sys.exit(130)
