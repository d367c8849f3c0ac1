"""``lar undo``: put the workspace back as it was before a code or shell run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lar.cli.options import WorkspaceOpt
from lar.cli.render import print_error, short
from lar.errors import LarError

__all__ = ["undo"]


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
    from lar.tools import ToolContext, private_paths, restore, snapshots

    try:
        config = load_config()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    ws = Path(workspace or config.agent.workspace or Path.cwd()).expanduser().resolve()
    found = snapshots(config.home, ws)
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
    restored, removed = restore(chosen, config.home, private_paths(ctx))
    when = _time.strftime("%H:%M:%S", _time.localtime(chosen.created))
    typer.echo(
        f"restored {ws} to before {short(chosen.what, 60)} ({when}): "
        f"{restored} entries back, {removed} removed"
    )
