"""``lar role`` (validate, show, diff, apply, list, run, status, pack) and ``lar evidence``."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from lar.cli.render import print_error
from lar.config import lar_home
from lar.errors import LarError

if TYPE_CHECKING:
    from lar.roles import Role, RoleRunner

__all__ = ["role_app", "evidence"]

role_app = typer.Typer(
    help="Deterministic roles: a role file (agent.yaml) describes states, pipelines of tools with "
    "contracts, and intents. Code decides every step; the model only phrases the final report; "
    "every step is recorded in an evidence chain (`lar evidence RUN`)."
)
RoleArg = Annotated[
    str,
    typer.Argument(help="A role file (agent.yaml), or the name of a role installed with apply."),
]


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


@contextmanager
def _errors(code: int = 1) -> Iterator[None]:
    try:
        yield
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(code) from None


def _installed(home: Path) -> Path:
    return home / "roles"


def _role_file(ref: str) -> Path:
    path = Path(ref)
    if path.is_dir():
        path = path / "agent.yaml"
    if path.exists() or path.suffix in (".yaml", ".yml"):
        return path
    installed = _installed(lar_home()) / ref / "agent.yaml"
    if installed.exists():
        return installed
    raise LarError(f"{ref}: no such role file, and no role {ref!r} installed (see `lar role list`)")


def _load(ref: str) -> Role:
    from lar.roles import load_role

    return load_role(_role_file(ref))


def _runner(role: Role, *, engine: Any = None) -> RoleRunner:
    from lar.roles import runner_for

    home = lar_home()
    return runner_for(role, home, engine=engine, notify=_notifier(home))


def _notifier(home: Path) -> Any:
    def notify(channel: str, title: str, body: str) -> None:
        from lar.config import load_config
        from lar.scheduler import JobStore, notifiers_from

        if channel == "inbox":
            store = JobStore(home / "lar.db")
            try:
                store.deliver(None, title, body)
            finally:
                store.close()
            return
        try:
            settings = [n for n in load_config().scheduler.notify if n.kind == channel]
        except LarError:
            settings = []
        for notifier in notifiers_from(settings):
            notifier.send(title, body)
        if not settings:
            print(f"lar: notify {channel!r} is not configured (scheduler.notify)", file=sys.stderr)

    return notify


@role_app.command()
def validate(
    files: Annotated[list[str], typer.Argument(help="Role files (or installed role names).")],
) -> None:
    """Check role files, each defect with its file and line.

    States no entry reaches, dead ends, guards on fields no tool returns, contract mismatches,
    nondeterministic tools in pipelines, packages that are not signed by a key you trust."""
    from lar.roles import RoleFileError

    bad = 0
    for ref in files:
        try:
            role = _load(ref)
            runner = _runner(role)
        except RoleFileError as exc:
            bad += 1
            for p in exc.problems:
                typer.echo(str(p), err=True)
            continue
        except LarError as exc:
            bad += 1
            print_error(exc)
            continue
        spec = role.spec
        typer.echo(
            f"{role.file}: ok — {spec.name} {spec.version}, {len(spec.states)} states, "
            f"{len(spec.tools)} tools from {len(runner.capabilities)} capabilities, "
            f"{len(spec.intents)} intents"
        )
    if bad:
        raise typer.Exit(1)


@role_app.command()
def show(role: RoleArg) -> None:
    """The role as a job description: what it does, its tools, states and transitions."""
    with _errors():
        loaded = _load(role)
    spec = loaded.spec
    out = _out()
    out.print(f"[bold]{escape(spec.name)}[/] {escape(spec.version)}  ({loaded.file})")
    out.print(escape(" ".join(spec.role.split())))
    out.print(f"keeps its runs for {spec.memory_retention_days} days")
    if spec.inputs:
        out.print("\n[bold]Given[/]")
        for name, what in spec.inputs.items():
            out.print(f"  {escape(name)}: {escape(what)}")
    out.print("\n[bold]Tools[/]")
    for name, contract in spec.tools.items():
        out.print(
            f"  {escape(name)} ({contract.determinism}) {escape(contract.description)}".rstrip()
        )
    out.print("\n[bold]Intents[/]")
    for name, intent in spec.intents.items():
        out.print(f"  {escape(name)} → {intent.state}  {escape(intent.description)}")
    out.print("\n[bold]States[/]")
    for name, state in spec.states.items():
        what = " (final)" if state.final else f" runs {state.run}" if state.run else ""
        out.print(f"  {escape(name)}{what}  {escape(state.description)}".rstrip())
        if state.run:
            for step in spec.pipelines[state.run].steps:
                extra = f", retries {step.max_retries}" if step.max_retries else ""
                if step.fallback:
                    extra += f", fallback {step.fallback.strategy}"
                    extra += f" {step.fallback.tool}" if step.fallback.tool else ""
                out.print(f"    · {step.name}: {step.tool} (timeout {step.timeout_ms} ms{extra})")
        for t in state.next:
            out.print(f"    → {t.to}" + (f"  when {escape(t.when)}" if t.when else "  otherwise"))


@role_app.command()
def diff(
    old: Annotated[str, typer.Argument(help="The role file in use (or an installed name).")],
    new: Annotated[str, typer.Argument(help="The upgraded role file.")],
) -> None:
    """What an upgrade changes: states, transitions, steps, tools and contracts, retention."""
    from lar.roles import diff_roles

    with _errors():
        lines = diff_roles(_load(old), _load(new))
    typer.echo("\n".join(lines) if lines else "no changes")


@role_app.command()
def apply(
    file: Annotated[Path, typer.Argument(help="The role file to install (its folder is copied).")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before replacing.")] = False,
) -> None:
    """Install a role (validated first); replacing one shows the diff and asks."""
    from lar.roles import RoleFileError, diff_roles, load_role

    try:
        role = load_role(file)
        _runner(role)
    except RoleFileError as exc:
        for p in exc.problems:
            typer.echo(str(p), err=True)
        raise typer.Exit(1) from None
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    with _errors():
        _files_of(role)
    target = _installed(lar_home()) / role.name
    current = target / "agent.yaml"
    if current.exists():
        with _errors():
            lines = diff_roles(load_role(current), role)
        if not lines:
            typer.echo(f"{role.name} {role.spec.version} is installed already; no changes")
            return
        typer.echo("\n".join(lines))
        if not yes:
            if not sys.stdin.isatty():
                print_error(LarError("replacing an installed role needs a terminal or --yes"))
                raise typer.Exit(1)
            typer.confirm(f"replace {role.name}?", abort=True)
    staging = target.with_name(f".{role.name}.new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for rel in _files_of(role):
        dest = staging / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(role.folder / rel, dest)
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    typer.echo(f"installed {role.name} {role.spec.version} in {target}")


def _files_of(role: Role) -> list[str]:
    """The role file and every file it names (data, synonyms, packages), relative to it."""
    spec = role.spec
    named = [role.file.name, *spec.data.values()]
    if isinstance(spec.synonyms, str):
        named.append(spec.synonyms)
    named += [c.package for c in spec.capabilities if c.package]
    out = []
    for rel in named:
        path = (role.folder / rel).resolve()
        if role.folder not in path.parents:
            raise LarError(f"{role.file}: {rel} is outside the role's folder; keep it beside it")
        out.append(path.relative_to(role.folder).as_posix())
    return out


@role_app.command("list")
def list_() -> None:
    """Roles installed with `lar role apply`."""
    from lar.roles import RoleFileError, installed_roles

    found = installed_roles(lar_home())
    if not found:
        typer.echo("no roles installed (lar role apply FILE)")
    for file, r in found:
        if isinstance(r, RoleFileError):
            typer.echo(f"{file.parent.name}: broken ({r.problems[0]})")
        else:
            typer.echo(f"{r.name} {r.spec.version}  {' '.join(r.spec.role.split())[:80]}")


def _inputs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LarError(f"--input {pair!r}: write NAME=VALUE")
        out[key.strip()] = value
    return out


@role_app.command()
def run(
    role: RoleArg,
    request: Annotated[str, typer.Argument(help="What you want, in your words.")],
    inputs: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="NAME=VALUE for the role's inputs (see show)."),
    ] = None,
    intent: Annotated[
        str | None, typer.Option(help="Skip the intent parser and enter this intent.")
    ] = None,
    plain: Annotated[
        bool, typer.Option("--plain", help="Print the plain report; do not load the model.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured result.")] = False,
) -> None:
    """Run a role on a request.

    Exit 0 when it completed (or completed degraded), 3 when the request was unclear (the
    choices are printed), 1 when a step failed and the run stopped."""
    engine = None
    with _errors():
        loaded = _load(role)
        given = _inputs(inputs or [])
        runner = _runner(loaded)
        if not plain and not as_json and loaded.spec.report.fields:
            from lar.cli.render import model_progress
            from lar.config import load_config
            from lar.engines import build_engine

            try:
                with model_progress(False) as progress:
                    engine = build_engine(load_config(), progress=progress)
                runner.engine = engine
            except LarError as exc:
                print(
                    f"lar: no model for the report ({exc}); the plain report follows",
                    file=sys.stderr,
                )
        result = runner.run(request, given, intent=intent)
    if as_json:
        shown = {
            "run_id": result.run_id,
            "result_hash": result.result_hash,
            **result.result,
            "steps": [s.envelope() for s in result.steps],
        }
        typer.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        typer.echo(result.report)
        typer.echo(
            f"\nrun {result.run_id} · {' → '.join(result.path) or '—'} · report: "
            f"{result.report_source} · evidence: lar evidence {result.run_id}",
            err=True,
        )
    if result.outcome == "unclear":
        raise typer.Exit(3)
    if result.outcome not in ("completed", "degraded"):
        raise typer.Exit(1)


@role_app.command()
def status(role: RoleArg) -> None:
    """A role's health: readiness, each capability's probe, breakers, last runs.

    A capability is AVAILABLE, or UNAVAILABLE with the reason and where its tools are routed
    instead. Exit 1 when not ready or a capability is unavailable."""
    from lar.roles import role_health

    out = _out()
    with _errors():
        health = role_health(_runner(_load(role)))
    out.print(f"[bold]{escape(health['name'])}[/] {escape(health['version'])}")
    out.print("liveness: ok")
    problems = health["problems"]
    out.print("readiness: " + ("ok" if not problems else "NOT READY — " + "; ".join(problems)))
    out.print("[bold]capabilities[/]")
    for cap in health["capabilities"]:
        line = f"  {cap['name']} {cap['version']}: {cap['state']}"
        if cap["reason"]:
            line += f" — {cap['reason']}"
        out.print(escape(line))
        if cap["state"] == "UNAVAILABLE" and cap["degraded"]:
            routes = ", ".join(f"{a} → {b}" for a, b in cap["degraded"].items())
            out.print(escape(f"    degraded: {routes}"))
        out.print(f"    [dim]{escape(cap['source'])}[/]")
    for b in health["breakers"]:
        state = "closed" if b["open_for_s"] is None else f"open for {b['open_for_s']:.0f}s"
        out.print(f"breaker {escape(b['step'])}: {b['failures']} failures, {state}")
    if health["runs"]:
        out.print("[bold]last runs[/]")
        for r in health["runs"]:
            out.print(f"  {r['run_id']}  {r['outcome']:<10} {escape(r['final_state'])}")
    if problems or any(c["state"] == "UNAVAILABLE" for c in health["capabilities"]):
        raise typer.Exit(1)


@role_app.command()
def pack(
    folder: Annotated[
        Path, typer.Argument(help="A capability folder with capability_manifest.yaml.")
    ],
    out: Annotated[
        Path | None, typer.Option(help="Archive to write (default NAME-VERSION.tar.gz).")
    ] = None,
) -> None:
    """Sign a capability folder with your key (`lar skill keygen`) and write its archive."""
    import yaml

    from lar.roles import pack as pack_folder
    from lar.skills import load_private_key

    with _errors():
        manifest = yaml.safe_load((folder / "capability_manifest.yaml").read_text()) or {}
        key = load_private_key(lar_home() / "keys" / "skills_ed25519")
        target = out or Path(
            f"{manifest.get('name', 'capability')}-{manifest.get('version', '0')}.tar.gz"
        )
        pack_folder(folder, key, target)
    typer.echo(f"wrote {target} (signed)")


def evidence(
    run_id: Annotated[str, typer.Argument(help="A role run's id (or its first characters).")],
) -> None:
    """The evidence chain of a role run, checked.

    Each step's component, input and output hashes, time and the verification it passed; an
    edited, removed or reordered row is named, and the exit code is 1."""
    from datetime import datetime

    from lar.traces import EvidenceStore

    home = lar_home()
    store = EvidenceStore(home / "lar.db")
    with _errors():
        rows = store.chain(run_id)
        problems = store.verify(rows[0].run_id)
    out = _out()
    out.print(f"run {rows[0].run_id}")
    for r in rows:
        at = datetime.fromtimestamp(r.ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        out.print(
            f"{r.seq:>3}  {escape(r.state or '-')}  [bold]{escape(r.step)}[/]  "
            f"{escape(r.component)}  {at}"
        )
        out.print(f"     in  {r.input_hash}\n     out {r.output_hash}")
        out.print(f"     verified: {escape(r.verified)} · {escape(r.outcome)}")
    if problems:
        for p in problems:
            out.print(f"[red]TAMPERED[/] {escape(p)}")
        raise typer.Exit(1)
    out.print(f"chain intact ({len(rows)} steps, last hash {rows[-1].chain_hash[:16]})")
