"""``lar memory``: list, search, add, forget, export, import, verify, consolidate (M1–M7)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from lar.cli.render import print_error, short
from lar.errors import LarError

if TYPE_CHECKING:
    from lar.memory import AgentMemory, NewMemory

__all__ = ["memory_app"]

memory_app = typer.Typer(
    help="Long-term memory in $LAR_HOME/lar.db, mirrored as Markdown in $LAR_HOME/memory/."
)
EXPORT_FORMAT = "lar-memory/1"


def _when_or_exit(option: str, value: str) -> float:
    from lar.memory import parse_when

    try:
        return parse_when(value)
    except ValueError as exc:
        print_error(LarError(f"{option}: {exc}"))
        raise typer.Exit(2) from None


@contextmanager
def _memory() -> Iterator[AgentMemory]:
    """The memory with user edits of the L2/L3 files imported; files regenerated on exit."""
    from lar.config import load_config
    from lar.memory import open_memory

    try:
        memory = open_memory(load_config())
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    try:
        yield memory
        memory.sync_files()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        memory.store.close()


@memory_app.command("add")
def add(
    text: Annotated[str, typer.Argument(help="What to remember, one fact.")],
    type: Annotated[
        str | None,
        typer.Option(
            help="preference, fact, task, episode or skill (default: preference when it says "
            "what you like or avoid, else fact)."
        ),
    ] = None,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="When it happened or was said: 2023-05-07 or 2023-05-07 14:30 (default: now).",
        ),
    ] = None,
) -> None:
    """Remember something you state ("Remember that …" and the like are taken off; the write
    policy still applies: duplicates merge, a changed fact becomes a new version, volatile
    values and secrets are refused)."""
    from lar.memory import RETENTION_DAYS, statement

    if type is not None and type not in RETENTION_DAYS:
        print_error(LarError(f"--type must be one of {', '.join(RETENTION_DAYS)} (got {type!r})"))
        raise typer.Exit(2)
    created = _when_or_exit("--at", at) if at else None
    said = statement(" ".join(text.split()))
    with _memory() as memory:
        outcome = memory.write(
            said.content,
            type or said.type,  # type: ignore[arg-type]
            source="cli",
            created=created,
        )
    if outcome.action == "refused":
        print_error(LarError(f"not stored: {outcome.reason}"))
        raise typer.Exit(1)
    if outcome.action == "merged":
        typer.echo(f"{outcome.memory_id} (already known; merged)")
    elif outcome.action == "superseded":
        typer.echo(f"{outcome.memory_id} (new version of {outcome.replaced})")
    else:
        typer.echo(outcome.memory_id)


@memory_app.command("list")
def list_(
    all_versions: Annotated[
        bool, typer.Option("--all", help="Include superseded versions.")
    ] = False,
    type: Annotated[str | None, typer.Option(help="Only this type.")] = None,
) -> None:
    """Show the memories (current versions)."""
    with _memory() as memory:
        records = memory.store.records(include_old=all_versions)
    table = Table("id", "type", "created", "content", "supersedes")
    for r in records:
        if type and r.type != type:
            continue
        when = time.strftime("%Y-%m-%d", time.localtime(r.created))
        table.add_row(r.id, r.type, when, short(r.content, 80), r.supersedes or "")
    Console().print(table)


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="A question or words to look for.")],
    k: Annotated[int, typer.Option(min=1, max=100, help="How many results at most.")] = 5,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help='Recall as of this date (2023-10-01, or with a time): "last week" and '
            "decay count from it.",
        ),
    ] = None,
) -> None:
    """Recall as the agent does: BM25 and meaning fused, a time window if named, a threshold."""
    from lar.memory import why_nothing

    now = _when_or_exit("--as-of", as_of) if as_of else None
    with _memory() as memory:
        memory.session_id = "cli"
        found = memory.search(query, k, now=now)
        reason = (
            "" if found else why_nothing(memory.store, query, now=now, threshold=memory.threshold)
        )
    if not found:
        typer.echo(f"nothing recalled: {reason}")
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
    with _memory() as memory:
        memory.store.forget(memory_id)
    typer.echo(f"forgot {memory_id}")


@memory_app.command("verify")
def verify(
    accept: Annotated[
        bool,
        typer.Option(
            "--accept",
            help="Accept the store as it is now as its new sealed head (after restoring a "
            "backup, or a loss you know of); other problems are still reported.",
        ),
    ] = False,
) -> None:
    """Check every record's hash, the hash chain, and the store against its sealed head
    (memory.head: newest records removed or the database emptied); exit 1 and name each
    record at fault."""
    with _memory() as memory:
        if accept:
            memory.store.accept_head()
        problems = memory.store.verify()
        count = len(memory.store.records(include_old=True))
    for p in problems:
        typer.echo(f"{p.memory_id}: {p.kind}: {p.detail}")
    if problems:
        raise typer.Exit(1)
    typer.echo(f"ok: {count} records, hash chain intact")


@memory_app.command("export")
def export(
    path: Annotated[Path, typer.Argument(help="File to write (JSON lines).")],
    all_versions: Annotated[
        bool, typer.Option("--all", help="Include superseded and forgotten records.")
    ] = False,
) -> None:
    """Write the memories to a file `lar memory import` reads (one JSON object per line)."""
    with _memory() as memory:
        rows = memory.store.export_rows(include_old=all_versions)
    header = {"format": EXPORT_FORMAT, "exported": time.time(), "records": len(rows)}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [header, *rows]))
    tmp.replace(path)
    typer.echo(f"exported {len(rows)} records to {path}")


def _read_export(path: Path) -> list[dict[str, Any]]:
    from lar.jsonl import read_jsonl
    from lar.memory import RETENTION_DAYS

    lines = read_jsonl(path)
    try:
        first = next(lines, None)
    except LarError:
        first = (1, None)  # a first line that is not JSON: not an export at all
    if first is None:
        raise LarError(f"{path} is empty")
    n, header = first
    if n != 1 or not isinstance(header, dict) or header.get("format") != EXPORT_FORMAT:
        raise LarError(f"{path}:1: not a Lar memory export (expected format {EXPORT_FORMAT!r})")
    rows = []
    for n, row in lines:
        if not isinstance(row, dict) or not isinstance(row.get("content"), str):
            raise LarError(f"{path}:{n}: a record needs a 'content' string")
        if row.get("type") not in RETENTION_DAYS:
            raise LarError(f"{path}:{n}: unknown type {row.get('type')!r}")
        if not isinstance(row.get("created", 0), int | float):
            raise LarError(f"{path}:{n}: 'created' must be a number (seconds since 1970)")
        rows.append(row)
    return rows


def _is_export(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), "")
        header = json.loads(first)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(header, dict) and "format" in header


_IMPORT_BATCH = 200


@memory_app.command("import")
def import_(
    path: Annotated[
        Path,
        typer.Argument(
            help="A file written by `lar memory export`, or dated records: one JSON object "
            'per line such as {"text": "…", "speaker": "Ana", "at": "2023-05-08 13:56", '
            '"session": "chat 1"} (text required; at, speaker, session, type optional).'
        ),
    ],
) -> None:
    """Add records to memory, each with its own date; ones already known are skipped.

    Dated records keep their dates (recall can be asked as of any day) and are not expired for
    being old: retention counts from the import. Lines of a conversation (with a speaker) are
    indexed with the line they answer. The whole file is checked first: a bad line stops the
    import before anything is stored.
    """
    from lar.memory import NewMemory

    if not _is_export(path):
        _import_records(path)
        return
    try:
        rows = _read_export(path)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    items = [
        NewMemory(
            r["content"],
            r["type"],
            f"import:{r.get('source', '')}"[:200],
            float(r.get("confidence", 1.0)),
            r.get("created"),
            str(r.get("session_id", "")),
        )
        for r in rows
        if not r.get("forgotten") and not r.get("superseded_by")
    ]
    fresh = _store_new(items)
    typer.echo(f"imported {len(fresh)} records ({len(rows) - len(fresh)} skipped) from {path}")


def _store_new(items: list[NewMemory]) -> list[NewMemory]:
    """Store the items memory does not hold yet (same type and content), in batches with
    progress; returns those stored."""
    with _memory() as memory:
        known = {(r.type, r.content) for r in memory.store.records()}
        fresh = [item for item in items if (item.type, item.content.strip()) not in known]
        for start in range(0, len(fresh), _IMPORT_BATCH):
            memory.store.add_many(fresh[start : start + _IMPORT_BATCH], actor="import")
            if len(fresh) > _IMPORT_BATCH:
                done = min(start + _IMPORT_BATCH, len(fresh))
                typer.echo(f"  {done}/{len(fresh)} stored", err=True)
    return fresh


def _import_records(path: Path) -> None:
    from lar.memory import read_records

    try:
        items = read_records(path)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    fresh = _store_new(items)
    dated = [item.created for item in fresh if item.created is not None]
    span = ""
    if dated:
        span = f", dated {_day(min(dated))} to {_day(max(dated))}"
    typer.echo(
        f"imported {len(fresh)} records ({len(items) - len(fresh)} already known){span} from {path}"
    )


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


@memory_app.command("expire")
def expire(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would expire.")] = False,
) -> None:
    """Run the retention job: hide what is past its retention (memory.retention_days), counted
    from when Lar stored it. Recall never returns such records anyway; this records it."""
    with _memory() as memory:
        if dry_run:
            rows = memory.store.db.execute(
                "SELECT count(*) FROM memories WHERE forgotten = 0 AND retention_days IS NOT "
                "NULL AND COALESCE(stored, created) + retention_days * 86400.0 <= ?",
                (time.time(),),
            ).fetchone()
            typer.echo(f"{rows[0]} records would expire")
            return
        gone = memory.store.expire()
    typer.echo(f"expired {len(gone)} records")


@memory_app.command("consolidate")
def consolidate(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model that writes the summaries.")
    ] = None,
    all_open: Annotated[
        bool, typer.Option("--all", help="Also sessions that are not idle yet.")
    ] = False,
) -> None:
    """Summarize idle conversations, extract the facts you stated, archive the raw turns."""
    from lar.cli.agent import make_agent_or_exit

    agent = make_agent_or_exit(model=model)
    try:
        done = agent.consolidate(force=all_open)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        agent.close()
    if not done:
        typer.echo("nothing to consolidate")
    for c in done:
        typer.echo(f"{c.session_id}: {c.turns} turns, {len(c.facts)} facts; {c.archive}")
        typer.echo(f"  {short(c.summary, 160)}")
