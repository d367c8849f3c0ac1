"""``lar schedule`` (add, list, show, pause, resume, remove, run-now, run) and ``lar inbox``."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

import typer
from rich.console import Console
from rich.markup import escape

from lar.cli.render import print_error, short
from lar.cli.tables import table, when
from lar.config import LarConfig, load_config
from lar.errors import LarError
from lar.scheduler import Job, JobStore

__all__ = ["schedule_app", "inbox"]

schedule_app = typer.Typer(
    help="Jobs that run at a time or on a repeat: reminders delivered to `lar inbox`, or "
    "requests run as tasks. `lar serve` or `lar schedule run` must be running for them to fire."
)
IdArg = Annotated[int, typer.Argument(help="A job's number (see `lar schedule list`).")]


@contextmanager
def _store() -> Iterator[tuple[LarConfig, JobStore]]:
    try:
        config = load_config()
        store = JobStore(config.home / "lar.db")
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    try:
        yield config, store
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        store.close()


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _at(ts: float | None, tz: str) -> str:
    if ts is None:
        return "—"
    try:
        return datetime.fromtimestamp(ts, ZoneInfo(tz)).strftime("%a %Y-%m-%d %H:%M %Z")
    except (ValueError, OverflowError, OSError, LookupError):
        return "—"


def _describe(job: Job) -> list[str]:
    kind = "reminder" if job.action == "remind" else "request run as a task"
    lines = [
        f"job {job.id}: {kind}: {job.what}",
        f"  schedule: {job.describe()} (written {job.said!r}), zone {job.tz}",
        f"  next: {_at(job.next_due, job.tz)}; status: {job.status}",
        f"  if missed while Lar was not running: {'run once' if job.missed == 'once' else 'skip'}",
    ]
    if job.action == "run":
        lines.append(f"  works in: {job.folder or '(no folder recorded: invalid, never run)'}")
    unasked = ", ".join(job.grants) or "nothing (asking tools denied)"
    lines.append(f"  may use without asking: {unasked}")
    return lines


def _known_tools(config: LarConfig) -> set[str]:
    from lar.tools import builtin_tools, discover_tools

    return {t.name for t in [*builtin_tools(), *discover_tools(config.tools_dir)]}


@schedule_app.command()
def add(
    when_: Annotated[
        str,
        typer.Argument(
            metavar="WHEN",
            help="'tomorrow at 9am', 'once 2026-12-24 18:00', 'daily 08:00', "
            "'weekly mon 09:00', 'monthly 1 09:00', 'every 2h', or cron '0 9 * * 1-5'.",
        ),
    ],
    text: Annotated[str, typer.Argument(help="What to remind of, or (with --run) the request.")],
    run: Annotated[
        bool, typer.Option("--run", help="Run TEXT as a request when due (default: remind).")
    ] = False,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            "--allow",
            help="A tool that asks first (shell, file_write…) the run may use without asking. "
            "Repeat for more. Anything else that asks is denied and reported.",
        ),
    ] = None,
    missed: Annotated[
        Literal["once", "skip"] | None,
        typer.Option(help="If its time passes while Lar is not running: once or skip."),
    ] = None,
    tz: Annotated[
        str | None, typer.Option(help="IANA time zone (default: this machine's).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Grant --allow without asking.")] = False,
) -> None:
    """Add a job; what it may do unattended is shown and, with --allow, confirmed."""
    grants = sorted(set(allow or []))
    with _store() as (config, store):
        if grants and not run:
            raise LarError("--allow is for --run jobs; a reminder runs no tools")
        unknown = [g for g in grants if g not in _known_tools(config)]
        if unknown:
            raise LarError(f"--allow: unknown tool {', '.join(map(repr, unknown))}")
        if grants and not yes:
            if not sys.stdin.isatty():
                raise LarError("granting tools needs a yes: run in a terminal or add --yes")
            asked = f"Let this job use {', '.join(grants)} at its times, with nobody asked?"
            if not typer.confirm(asked, default=False):
                raise typer.Exit(1)
        job = store.add(
            text,
            when_,
            action="run" if run else "remind",
            tz=tz or config.scheduler.timezone,
            missed=missed or config.scheduler.missed,
            grants=grants,
            folder=(config.agent.workspace or Path.cwd()) if run else None,
            permissions=config.tools.permissions,
        )
        _out().print(escape("\n".join(_describe(job))))


@schedule_app.command("list")
def list_jobs(
    all_: Annotated[bool, typer.Option("--all", help="Also the finished one-off jobs.")] = False,
) -> None:
    """The jobs, by number, with their next time."""
    with _store() as (_, store):
        jobs = store.jobs(everything=all_)
        if not jobs:
            _out().print("no jobs (add one with `lar schedule add`)")
            return
        listing = table("id", "next", "status", "schedule", "what", text="what")
        for job in jobs:
            kind = "" if job.action == "remind" else "[run] "
            listing.add_row(
                str(job.id),
                _at(job.next_due, job.tz),
                job.status,
                escape(job.describe()),
                escape(kind + short(job.what, 80)),
            )
        _out().print(listing)


@schedule_app.command()
def show(job_id: IdArg) -> None:
    """A job and its recent runs."""
    with _store() as (_, store):
        job = store.get(job_id)
        lines = _describe(job)
        runs = store.runs(job_id, limit=10)
        lines.append("runs:" if runs else "runs: none yet")
        for r in runs:
            task = f" task {r.task_id}" if r.task_id else ""
            lines.append(f"  {_at(r.due, job.tz)}: {r.state}{task} — {short(r.result, 100)}")
        _out().print(escape("\n".join(lines)))


@schedule_app.command()
def pause(job_id: IdArg) -> None:
    """Stop a job firing until resumed."""
    with _store() as (_, store):
        job = store.pause(job_id)
        _out().print(f"job {job.id} paused")


@schedule_app.command()
def resume(job_id: IdArg) -> None:
    """Fire a paused job again (times passed meanwhile are not made up for)."""
    with _store() as (_, store):
        job = store.resume(job_id)
        _out().print(f"job {job.id} active; next: {_at(job.next_due, job.tz)}")


@schedule_app.command()
def remove(job_id: IdArg) -> None:
    """Delete a job and its run history (the inbox keeps what it delivered)."""
    with _store() as (_, store):
        job = store.remove(job_id)
        _out().print(escape(f"job {job.id} removed: {job.what}"))


def _runner(config: LarConfig, store: JobStore, *, quiet: bool) -> Any:
    """The job runner of this process; the model is loaded only when a job or idle mode needs
    it (now, for idle mode; on the first request job otherwise)."""
    from lar.agents import JobRunner
    from lar.cli.agent import make_agent

    def make() -> tuple[Any, Any]:
        agent = make_agent(
            model=None,
            track=None,
            workspace=None,
            max_turns=None,
            approver=None,
            ask_user=None,
            quiet=quiet,
        )
        return agent, agent.session().runner

    idle = config.scheduler.idle
    agent, runner = make() if idle.enabled and idle.actions else (None, None)
    return JobRunner.for_config(config, store, agent=agent, runner=runner, make_agent=make)


def _report(fired: Any) -> None:
    line = f"{when(time.time())} job {fired.job.id} {fired.state}: {short(fired.text, 100)}"
    Console(stderr=True, highlight=False).print(escape(line))


@schedule_app.command("run-now")
def run_now(job_id: IdArg) -> None:
    """Fire a job now, here (its schedule is unchanged); the result goes to the inbox."""
    with _store() as (config, store):
        store.get(job_id)
        runner = _runner(config, store, quiet=False)
        fired = asyncio.run(runner.run_now(job_id))
        _report(fired)
        _out().print(escape(fired.text))


@schedule_app.command("run")
def run_scheduler(
    once: Annotated[
        bool, typer.Option("--once", help="Fire what is due now, then exit (for cron, timers).")
    ] = False,
) -> None:
    """Fire jobs when due, until Ctrl-C (not needed while `lar serve` runs: it does this)."""
    with _store() as (config, store):
        runner = _runner(config, store, quiet=True)
        if once:
            for fired in asyncio.run(runner.tick()):
                _report(fired)
            return
        err = Console(stderr=True, highlight=False)
        err.print(f"scheduler running ({len(store.jobs())} jobs); Ctrl-C stops it")

        async def main() -> None:
            stop = asyncio.Event()
            await runner.serve(stop, on_fired=_report)

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            err.print("scheduler stopped")


def inbox(
    all_: Annotated[bool, typer.Option("--all", help="Also what was read before.")] = False,
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 20,
) -> None:
    """What fired jobs delivered (reminders, results, denials); shown items are marked read."""
    with _store() as (_, store):
        items = store.inbox(unread=not all_, limit=limit)
        if not items:
            _out().print("inbox empty" if all_ else "no unread items (`lar inbox --all` for all)")
            return
        out = _out()
        for item in reversed(items):
            mark = " " if item.read else "•"
            out.print(escape(f"{mark} {when(item.created)}  {item.title}"))
            if item.body.strip() and item.body.strip() != item.title.split(": ", 1)[-1]:
                for line in item.body.strip().splitlines()[:20]:
                    out.print(escape(f"    {line}"))
        store.mark_read([i.id for i in items])
