"""The ``lar`` command line (I1): run, chat, model."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from lar import __version__
from lar.cli.evals import eval_command
from lar.cli.memory import memory_app
from lar.cli.render import StagedLog, console_err, print_error, short
from lar.cli.traces import feedback, learn, stats, trace_app
from lar.errors import ConfigError, LarError, RunInterrupted

__all__ = ["app"]

app = typer.Typer(
    name="lar",
    help="Lar: a local-first personal AI agent. Everything runs on this machine by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
model_app = typer.Typer(help="Manage local models.", no_args_is_help=True)
app.add_typer(model_app, name="model")
app.add_typer(memory_app, name="memory", no_args_is_help=True)
app.add_typer(trace_app, name="trace", no_args_is_help=True)


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
    typer.Option(help="Tool-calling track: auto, native or protocol."),
]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(help="Directory the file and code tools work in (default: current directory)."),
]
NoMemoryOpt = Annotated[
    bool,
    typer.Option(
        "--no-memory",
        help="Neither recall nor store memories (the agent still sees this conversation).",
    ),
]


def _make_agent(
    *,
    model: str | None,
    track: str | None,
    workspace: Path | None,
    max_turns: int | None,
    approver: Any,
    ask_user: Any,
    quiet: bool,
    memory: bool = True,
) -> Any:
    from lar.agents.agent import Agent
    from lar.agents.state import TaskStore
    from lar.config import load_config
    from lar.redact import Redactor
    from lar.registry import load_plugins
    from lar.tools.builtin import builtin_tools
    from lar.tools.discovery import discover_tools

    load_plugins()  # before the config: plugins may add engine kinds and tools
    config = load_config()
    if track not in (None, "auto", "native", "protocol"):
        raise LarError(f"--track must be auto, native or protocol (got {track!r})")
    tools = [*builtin_tools(), *discover_tools(config.tools_dir)]
    with _model_progress(quiet) as progress:
        agent = Agent(
            tools=tools,
            model=model,
            config=config,
            track=track,  # type: ignore[arg-type]
            workspace=workspace,
            max_turns=max_turns,
            approver=approver,
            ask_user=ask_user,
            on_model_progress=progress,
            tasks=TaskStore(config.home / "lar.db", redact=Redactor(config.secrets()).text),
            memory=memory,
        )
        agent.session().engine  # noqa: B018 - build the model now: its errors and progress belong here
    return agent


def make_agent_or_exit(
    *,
    model: str | None,
    track: str | None = None,
    approver: Any = None,
    quiet: bool = False,
    memory: bool = True,
) -> Any:
    """An agent for a command that only needs the model and memory; a bad config exits 2."""
    try:
        return _make_agent(
            model=model,
            track=track,
            workspace=None,
            max_turns=None,
            approver=approver,
            ask_user=None,
            quiet=quiet,
            memory=memory,
        )
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(_exit_code(exc)) from None


class _model_progress:  # noqa: N801 - used as a context manager, reads like a function
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


def _deny_all(call: Any, tool: Any) -> bool:
    return False


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
    urgent: Annotated[
        bool, typer.Option("--urgent", help="Speed first: the router picks the smallest model.")
    ] = False,
) -> None:
    """Run one request to a final answer: the answer on stdout, progress on stderr.

    Without --model the router picks the model (see `lar trace show ID` for why). Tools that
    change things (file_write, file_patch, code_run) need confirmation: without --yes they are
    denied and the model is told so.
    """
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
) -> None:
    """Build the agent for a non-interactive command and print what ``events(agent)`` yields."""
    try:
        agent = _make_agent(
            model=model,
            track=track,
            workspace=workspace,
            max_turns=max_turns,
            approver=_allow_all if yes else _deny_all,
            ask_user=_ask_stdin,
            quiet=quiet or json_out,
            memory=memory,
        )
        _consume(agent, events(agent), json_out=json_out, quiet=quiet)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(_exit_code(exc)) from None


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


def _exit_code(exc: LarError) -> int:
    return 2 if isinstance(exc, ConfigError) else 1


def _consume(agent: Any, events: Any, *, json_out: bool, quiet: bool) -> None:
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
    """Show the prompt the model would get for TEXT and how its tokens split (X1, X2).

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
    from lar.agents.context import SHARES

    for part, share in SHARES.items():
        table.add_row(part, str(view.tokens[part]), str(view.limits[part]), f"{share:.0%}")
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
    import time as _time

    from rich.console import Console
    from rich.table import Table

    from lar.agents.state import TaskStore
    from lar.config import load_config

    try:
        store = TaskStore(load_config().home / "lar.db")
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    table = Table("id", "status", "updated", "request")
    for t in store.list(limit):
        when = _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(t.updated))
        table.add_row(t.id, t.status, when, short(t.request, 60))
    store.close()
    Console().print(table)


@app.command()
def chat(
    model: ModelOpt = None,
    track: TrackOpt = None,
    workspace: WorkspaceOpt = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow confirm-tools without asking.")
    ] = False,
    no_memory: NoMemoryOpt = False,
) -> None:
    """Talk with Lar. Commands: /reset (forget the conversation), /model [NAME], /exit."""
    from lar.cli.chat import ChatSession

    try:
        ChatSession(
            make_agent=lambda name, approver, ask: _make_agent(
                model=name,
                track=track,
                workspace=workspace,
                max_turns=None,
                approver=approver,
                ask_user=ask,
                quiet=False,
                memory=not no_memory,
            ),
            model=model,
            auto_yes=yes,
        ).loop()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(_exit_code(exc)) from None


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


@app.command()
def undo(
    snapshot_id: Annotated[
        str | None, typer.Argument(help="A snapshot from --list (default: the newest here).")
    ] = None,
    workspace: WorkspaceOpt = None,
    list_them: Annotated[
        bool, typer.Option("--list", help="List this workspace's snapshots, newest first.")
    ] = False,
) -> None:
    """Put the workspace back as it was before a code_run or shell call, byte for byte.

    Every code and shell run first snapshots the workspace; `lar undo` restores the newest
    snapshot of the current workspace (files made since are removed, changed or deleted ones
    come back) and uses it up, so a second `lar undo` goes one run further back.
    """
    import time as _time

    from lar.config import load_config
    from lar.tools import undo as undo_mod
    from lar.tools.base import ToolContext, private_paths

    try:
        config = load_config()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    ws = Path(workspace or config.agent.workspace or Path.cwd()).expanduser().resolve()
    found = undo_mod.snapshots(config.home, ws)
    if list_them:
        for snap in found:
            when = _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(snap.created))
            typer.echo(f"{snap.id}  {when}  {short(snap.what, 70)}")
        if not found:
            typer.echo(f"no snapshots of {ws}")
        return
    chosen = next((s for s in found if s.id == snapshot_id), None) if snapshot_id else None
    if snapshot_id and chosen is None:
        print_error(f"no snapshot {snapshot_id!r} of {ws}; see `lar undo --list`")
        raise typer.Exit(1)
    chosen = chosen or (found[0] if found else None)
    if chosen is None:
        print_error(f"nothing to undo in {ws}: no code_run or shell call ran here")
        raise typer.Exit(1)
    ctx = ToolContext(workspace=ws, home=config.home, sandbox=config.tools.sandbox)
    restored, removed = undo_mod.restore(chosen, config.home, private_paths(ctx))
    when = _time.strftime("%H:%M:%S", _time.localtime(chosen.created))
    typer.echo(
        f"restored {ws} to before {short(chosen.what, 60)} ({when}): "
        f"{restored} entries back, {removed} removed"
    )


@model_app.command("install")
def model_install(
    name: Annotated[
        str | None, typer.Argument(help="Bundled model to assemble (default: the default model).")
    ] = None,
) -> None:
    """Assemble and verify a bundled model in $LAR_HOME/models (once; later runs are instant)."""
    from lar.config import load_config
    from lar.engines.default_model import DEFAULT_MODEL, MODEL_PACKAGES, ensure_model

    try:
        spec = MODEL_PACKAGES.get(name or DEFAULT_MODEL.name)
        if spec is None:
            raise LarError(f"unknown bundled model {name!r}; known: {', '.join(MODEL_PACKAGES)}")
        config = load_config()
        with _model_progress(False, spec.name) as progress:
            path = ensure_model(config.models_dir, spec, progress=progress)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    typer.echo(f"{spec.name}: {path} (sha256 {spec.sha256[:12]}… verified)")


@model_app.command("serve")
def model_serve(
    model: Annotated[
        str,
        typer.Argument(help="A bundled model name (see `lar model install`) or a GGUF file."),
    ],
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = 8080,
    name: Annotated[
        str | None, typer.Option(help="The model name clients ask for (default: the model's).")
    ] = None,
    n_ctx: Annotated[int, typer.Option(min=256, help="Context window in tokens.")] = 4096,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads.")] = None,
    host: Annotated[
        str, typer.Option(help="Address to bind; loopback unless you mean to share it.")
    ] = "127.0.0.1",
) -> None:
    """Serve a local model over the OpenAI-compatible API until Ctrl-C (llama.cpp's server).

    Another Lar (or any OpenAI client) can then use it as an `engine: openai` model with
    `base_url: http://127.0.0.1:PORT/v1`.
    """
    import signal
    import threading

    from lar.config import load_config
    from lar.engines.default_model import MODEL_PACKAGES, ensure_model
    from lar.engines.llamacpp import serve

    try:
        config = load_config()
        spec = MODEL_PACKAGES.get(model)
        if spec is not None:
            with _model_progress(False, spec.name) as progress:
                path = ensure_model(config.models_dir, spec, progress=progress)
        else:
            path = Path(model).expanduser()
            if not path.is_file():
                known = ", ".join(MODEL_PACKAGES)
                raise LarError(f"{model!r} is neither a bundled model ({known}) nor a GGUF file")
        alias = name or (spec.name if spec else path.stem)
        server = serve(path, alias=alias, port=port, host=host, n_ctx=n_ctx, threads=threads)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(_exit_code(exc)) from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    console_err().print(f"serving {alias} on http://{host}:{port}/v1 (Ctrl-C stops)")
    try:
        while not stop.wait(3600):
            pass
    except KeyboardInterrupt:
        pass
    del server


@model_app.command("list")
def model_list() -> None:
    """Show the configured models and which one is used by default."""
    from rich.console import Console
    from rich.table import Table

    from lar.config import DEFAULT_MODEL_NAME, load_config
    from lar.engines.default_model import DEFAULT_MODEL, model_path

    try:
        config = load_config()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    from lar.engines.catalog import describe

    table = Table(
        "name", "engine", "where", "params", "context", "tags", "local", "$/1M in/out", ""
    )
    installed = model_path(config.models_dir).is_file()
    names = [DEFAULT_MODEL_NAME, *(m.name for m in config.models if m.name != DEFAULT_MODEL_NAME)]
    for name in names:
        cfg = config.model_named(name)
        info = describe(cfg)
        if cfg.engine == "llamacpp" and not cfg.path and name == DEFAULT_MODEL_NAME:
            where = f"{DEFAULT_MODEL.name} ({'installed' if installed else 'not assembled yet'})"
        else:
            where = cfg.base_url or cfg.path or cfg.package or DEFAULT_MODEL.name
        marks = []
        if name == config.model:
            marks.append("default")
        if name in config.candidates():
            marks.append("routed")
        table.add_row(
            name,
            cfg.engine,
            where,
            f"{info.params_b:g}B" if info.params_b is not None else "?",
            str(info.context_length or "?"),
            ", ".join(sorted(info.tags)),
            "yes" if info.local else "cloud",
            f"{info.price_in_per_m:g}/{info.price_out_per_m:g}",
            " ".join(marks),
        )
    Console().print(table)


# After the core commands, so `lar --help` lists run, chat … first.
app.command(context_settings={"ignore_unknown_options": True})(feedback)  # "-1" is a score
app.command()(learn)
app.command()(stats)
app.command("eval")(eval_command)


def entry() -> None:
    """The ``lar`` command: every known failure is one line and an exit code, never a traceback."""
    import sqlite3

    from lar.config import lar_home

    try:
        app()
    except LarError as exc:
        print_error(exc)
        sys.exit(_exit_code(exc))
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
