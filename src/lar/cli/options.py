"""Options more than one command takes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["WorkspaceOpt"]

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(help="Directory the file and code tools work in (default: current directory)."),
]
