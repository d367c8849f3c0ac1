"""``lar skill``: install, list, show, enable, disable, remove, keygen, sign, verify (K1, K4)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lar.cli.render import print_error, short
from lar.config import lar_home
from lar.errors import LarError
from lar.skills import Finding, SkillStore

__all__ = ["skill_app"]

skill_app = typer.Typer(
    help="Skills: SKILL.md folders in $LAR_HOME/skills/, each offered to the model as a tool."
)
NameArg = Annotated[str, typer.Argument(help="An installed skill's name (see `lar skill list`).")]


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


@skill_app.command()
def install(
    source: Annotated[
        str,
        typer.Argument(
            help="A skill folder, a folder of skills, or a git checkout (PATH@REF for a tag, "
            "branch or commit). Nothing is downloaded."
        ),
    ],
    trust: Annotated[
        bool,
        typer.Option(
            "--trust",
            help="Install even if unsigned, signed by an unknown key, changed since signing, "
            "or flagged by the install scan. Read what it says first.",
        ),
    ] = False,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace an installed skill of the same name.")
    ] = False,
) -> None:
    """Install skills: checked, scanned for download-and-run tricks, copied to $LAR_HOME/skills/.

    A skill's install steps and "prerequisites" are never run; the scan shows what they would do.
    Exits 1 when any skill found was refused.
    """
    out = _out()

    def show(name: str, findings: list[Finding]) -> None:
        out.print(f"{escape(name)}: the install scan found {len(findings)} thing(s) to read first:")
        for finding in findings:
            out.print(f"  [yellow]scan:[/yellow] {escape(str(finding))}")

    with _errors():
        report = SkillStore(lar_home()).install(source, trust=trust, replace=replace, show=show)
    for done in report.installed:
        how = done.verdict.describe()
        out.print(f"installed {done.name} → {done.folder} ({escape(how)})")
        for problem in done.problems:
            out.print(f"  {escape(str(problem))}")
    for name, why in report.refused:
        print_error(f"{name}: refused: {why}")
    if report.refused:
        raise typer.Exit(1)


@skill_app.command("list")
def list_(
    path: Annotated[
        Path | None,
        typer.Argument(help="List the skills in this folder instead (nothing is installed)."),
    ] = None,
    drafts: Annotated[
        bool, typer.Option("--drafts", help="Only skills drafted from your tasks, for review.")
    ] = False,
) -> None:
    """Installed skills with their state, tier and source; or every SKILL.md under PATH with
    what loading it gave (ok, warnings, refused) and why, by file and line."""
    out = _out()
    if path is not None:
        from lar.skills import scan_folder

        results = scan_folder(path)
        table = Table("skill", "outcome", "file")
        for r in results:
            name = r.skill.name if r.skill else "—"
            table.add_row(
                name, r.outcome, str(r.file.relative_to(path) if r.file != path else r.file)
            )
        out.print(table)
        for r in results:
            for problem in r.problems:
                out.print(escape(str(problem)))
        counts = {k: sum(r.outcome == k for r in results) for k in ("ok", "warnings", "refused")}
        out.print(", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(results)}")
        return
    with _errors():
        installed = SkillStore(lar_home()).installed()
    rows = [item for item in installed if bool(item[0].get("draft")) == drafts]
    if not rows:
        out.print(
            "no skill drafts to review"
            if drafts
            else "no skills installed (lar skill install PATH)"
        )
        return
    table = Table("skill", "state", "tier", "description", "source")
    for entry, result, changed in rows:
        state = "changed!" if changed else ("enabled" if entry.get("enabled", True) else "disabled")
        about = short(result.skill.short(), 60) if result and result.skill else "unreadable"
        table.add_row(entry["name"], state, entry.get("tier", "?"), about, entry.get("source", ""))
    out.print(table)
    for entry, _, changed in rows:
        if changed:
            print_error(f"{entry['name']}: changed since install, not loaded: {', '.join(changed)}")


@skill_app.command()
def show(name: NameArg) -> None:
    """A skill's description, files, steps, trust and install record (its body is not printed;
    `cat` the SKILL.md for that)."""
    from lar.skills import scan_folder

    store = SkillStore(lar_home())
    out = _out()
    with _errors():
        entry = store.lock().get(name)
        if entry is None:
            raise LarError(f"no installed skill {name!r} (see `lar skill list`)")
        changed = store.check(name)
        results = scan_folder(store.folder(name))
    skill = results[0].skill if results else None
    state = "enabled" if entry.get("enabled", True) else "disabled"
    out.print(f"[bold]{escape(name)}[/bold]  ({entry.get('tier')}, {state})")
    if skill is not None:
        out.print(escape(skill.description))
        out.print(f"tool: {skill.tool_name}")
        for step in skill.steps:
            kind = "skill" if step.skill else "tool"
            out.print(f"  step: {kind} {step.target} → {step.output or '(result)'}")
        for kind, files in skill.resources().items():
            out.print(f"{kind}: {', '.join(files)}")
        prereq = {
            k: skill.frontmatter[k] for k in ("prerequisites", "setup") if k in skill.frontmatter
        }
        if prereq:
            out.print(f"prerequisites (never run by Lar): {escape(str(prereq))}")
        for problem in results[0].problems:
            out.print(escape(str(problem)))
    out.print(
        f"source: {entry.get('source')} {entry.get('ref', '')} {entry.get('commit', '')}".rstrip()
    )
    out.print(f"hash: {entry.get('hash')}  installed {entry.get('installed_at')}")
    if changed:
        print_error(f"changed since install (not loaded): {', '.join(changed)}")


@skill_app.command()
def enable(name: NameArg) -> None:
    """Offer the skill to the model again."""
    with _errors():
        SkillStore(lar_home()).set_enabled(name, True)
    typer.echo(f"enabled {name}")


@skill_app.command()
def disable(name: NameArg) -> None:
    """Stop offering the skill to the model (it stays installed)."""
    with _errors():
        SkillStore(lar_home()).set_enabled(name, False)
    typer.echo(f"disabled {name}")


@skill_app.command()
def remove(name: NameArg) -> None:
    """Delete the installed skill and its lock entry."""
    with _errors():
        SkillStore(lar_home()).remove(name)
    typer.echo(f"removed {name}")


@skill_app.command()
def keygen() -> None:
    """Make your Ed25519 signing key ($LAR_HOME/keys/skills_ed25519, mode 0600). Skills you sign
    with it install as your own."""
    from lar.skills import keygen as make_key

    with _errors():
        private, kid = make_key(SkillStore(lar_home()).keys)
    typer.echo(f"key {kid}: {private} (public: {private}.pub)")


@skill_app.command()
def sign(
    folder: Annotated[
        Path, typer.Argument(help="The skill folder to sign.", exists=True, file_okay=False)
    ],
) -> None:
    """Sign every file of a skill folder with your key: writes SIGNATURE.json into it."""
    from lar.skills import load_private_key, load_skill
    from lar.skills import sign as sign_folder

    store = SkillStore(lar_home())
    with _errors():
        load_skill(folder)
        out = sign_folder(folder, load_private_key(store.keys / "skills_ed25519"))
    typer.echo(f"signed {folder}: {out}")


@skill_app.command()
def verify(
    target: Annotated[str, typer.Argument(help="A skill folder, or an installed skill's name.")],
) -> None:
    """Check a skill's signature and every file's hash; names any file that changed.
    Exits 1 when the skill is unsigned, tampered with, or (installed) changed since install."""
    from lar.skills import verify as check

    store = SkillStore(lar_home())
    folder = Path(target)
    with _errors():
        installed = not folder.is_dir() and target in store.lock()
        if installed:
            folder = store.folder(target)
        elif not folder.is_dir():
            raise LarError(f"{target}: neither a folder nor an installed skill")
        verdict = check(folder, store.trusted_keys())
        changed = store.check(target) if installed else []
    typer.echo(f"{folder}: {verdict.describe()}")
    if changed:
        print_error(f"changed since install: {', '.join(changed)}")
    if not verdict.intact or changed:
        raise typer.Exit(1)


@skill_app.command("trust-key")
def trust_key(
    public_key: Annotated[
        Path, typer.Argument(help="A publisher's PEM public key file.", exists=True)
    ],
) -> None:
    """Trust a publisher: skills signed with this key install without --trust."""
    with _errors():
        kid = SkillStore(lar_home()).trust_key(public_key)
    typer.echo(f"trusted key {kid}")


@skill_app.command()
def learn(
    trace_id: Annotated[str, typer.Argument(help="A task's trace (see `lar trace list`).")],
    min_calls: Annotated[
        int, typer.Option("--min-calls", help="Tool calls the task needs to have made.")
    ] = 5,
) -> None:
    """Draft a skill from a task that succeeded: only its calls that succeeded, in order, with
    the values your request spelled out as parameters. The draft stays disabled until you
    `lar skill enable` it; a task whose steps match an installed skill drafts nothing."""
    from lar.config import load_config
    from lar.skills import learn_from_trace
    from lar.traces import TraceStore

    with _errors():
        config = load_config()
        traces = TraceStore(config.home / "lar.db", background=False)
        try:
            trace = traces.get(trace_id)
        finally:
            traces.close()
        store = SkillStore(config.home)
        learned = learn_from_trace(store, trace, min_calls=min_calls)
    if learned is None:
        print_error(
            f"{trace.id}: nothing to learn (the task failed, or made fewer than {min_calls} "
            "tool calls, or fewer than 2 of them succeeded)"
        )
        raise typer.Exit(1)
    if not learned.drafted:
        typer.echo(f"nothing new: {learned.why}")
        return
    typer.echo(
        f"drafted {learned.name} ({learned.steps} steps): review with `lar skill show "
        f"{learned.name}`, then `lar skill enable {learned.name}`"
    )


@skill_app.command()
def optimize(
    name: Annotated[str | None, typer.Argument(help="Only this skill (default: all).")] = None,
    min_traces: Annotated[
        int, typer.Option("--min-traces", help="Traces a skill needs before it is tuned.")
    ] = 20,
) -> None:
    """Tune skills' descriptions and examples offline from their traces.

    Each skill's requests are split into training and held-out parts; the best candidate on the
    training part is kept only if it ranks the skill first more often on the held-out part than
    the original did. The winner is written beside the skill as an overlay (the skill itself is
    never changed); `lar skill overlay remove NAME` rolls it back.
    """
    from lar.config import load_config
    from lar.memory import open_embedder
    from lar.skills import optimize as tune
    from lar.traces import TraceStore

    out = _out()
    with _errors():
        config = load_config()
        store = SkillStore(config.home)
        skills = store.loaded_skills(store.lock())
        if name is not None and name not in {s.name for s in skills}:
            raise LarError(f"no installed skill {name!r} (see `lar skill list`)")
        embedder = open_embedder(config)
        if embedder is None:
            raise LarError("the optimizer needs the sentence embedder (memory.embedder)")
        traces = TraceStore(config.home / "lar.db", background=False)
        try:
            found = traces.using_tools("skill_")
        finally:
            traces.close()
        results = tune(skills, found, embedder.encode, store.root, min_traces=min_traces, only=name)
    table = Table("skill", "traces", "train/held-out", "held-out top-1 before", "after", "overlay")
    for r in results:
        before = f"{r.before:.0%}" if r.before is not None else "—"
        after = f"{r.after:.0%}" if r.after is not None else "—"
        split = f"{r.train}/{r.held_out}" if r.train else "—"
        table.add_row(
            r.name, str(r.traces), split, before, after, "written" if r.written else r.why
        )
    out.print(table)


overlay_app = typer.Typer(help="Overlays the optimizer wrote beside skills.")
skill_app.add_typer(overlay_app, name="overlay", no_args_is_help=True)


@overlay_app.command("show")
def overlay_show(name: NameArg) -> None:
    """The overlay's description and examples, and the held-out metric it won with."""
    from lar.skills import read_overlay

    store = SkillStore(lar_home())
    with _errors():
        overlay = read_overlay(store.root, name)
    if overlay is None:
        typer.echo(f"{name}: no overlay (the skill is used as written)")
        return
    typer.echo(f"description: {overlay.description}")
    for example in overlay.examples:
        typer.echo(f"example: {example}")
    typer.echo(
        f"held-out top-1: {overlay.before:.0%} → {overlay.after:.0%} "
        f"({overlay.train} training, {overlay.held_out} held-out requests; {overlay.created})"
    )


@overlay_app.command("remove")
def overlay_remove(name: NameArg) -> None:
    """Delete the overlay: the skill is offered exactly as written again."""
    from lar.skills import overlay_path

    with _errors():
        path = overlay_path(SkillStore(lar_home()).root, name)
    if not path.exists():
        print_error(f"{name}: no overlay to remove")
        raise typer.Exit(1)
    path.unlink()
    typer.echo(f"removed {path}")
