"""``lar memory``: add, list, search, forget and verify long-term memories (M6)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from lar.cli.render import print_error, short
from lar.errors import LarError
from lar.memory.store import MemoryStore

__all__ = ["memory_app"]

memory_app = typer.Typer(help="Long-term memory: add, list, search, forget, verify.")


def _store() -> MemoryStore:
    from lar.config import load_config
    from lar.memory import open_store

    try:
        return open_store(load_config())
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


@memory_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="What to remember.")],
    type: Annotated[str, typer.Option(help="preference, fact, task, episode or skill.")] = "fact",
) -> None:
    """Remember something (an explicit user statement)."""
    store = _store()
    try:
        typer.echo(store.add(text, type=type, source="cli"))  # type: ignore[arg-type]  # checked
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        store.close()


@memory_app.command("list")
def list_(
    all_versions: Annotated[
        bool, typer.Option("--all", help="Include superseded versions.")
    ] = False,
) -> None:
    """Show the memories (current versions)."""
    store = _store()
    table = Table("id", "type", "content", "supersedes")
    for r in store.records(include_old=all_versions):
        table.add_row(r.id, r.type, short(r.content, 80), r.supersedes or "")
    store.close()
    Console().print(table)


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="A question or words to look for.")],
    k: Annotated[int, typer.Option(min=1, max=100, help="How many results at most.")] = 5,
) -> None:
    """Recall as the agent does: BM25 and meaning fused, a time window if named, a threshold."""
    from lar.memory.recall import recall

    store = _store()
    try:
        found = recall(store, query, k=k, session_id="cli")
    finally:
        store.close()
    if not found:
        typer.echo("nothing recalled (no memory is close enough)")
        return
    table = Table("score", "cosine", "id", "type", "content")
    for r in found:
        cosine = "" if r.cosine is None else f"{r.cosine:.2f}"
        table.add_row(
            f"{r.score:.4f}", cosine, r.record.id, r.record.type, short(r.record.content, 80)
        )
    Console().print(table)


@memory_app.command("forget")
def forget(
    memory_id: Annotated[str, typer.Argument(help="The memory to hide from recall.")],
) -> None:
    """Hide a memory from recall (its history and audit entries stay)."""
    store = _store()
    try:
        store.forget(memory_id)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        store.close()
    typer.echo(f"forgot {memory_id}")


@memory_app.command("verify")
def verify() -> None:
    """Check every record's hash and the hash chain; exit 1 and name each record at fault."""
    store = _store()
    problems = store.verify()
    count = len(store.records(include_old=True))
    store.close()
    for p in problems:
        typer.echo(f"{p.memory_id}: {p.kind}: {p.detail}")
    if problems:
        raise typer.Exit(1)
    typer.echo(f"ok: {count} records, hash chain intact")
