"""Tables that read at 80 columns and in a pipe: light rules, every column kept whole except the
one free-text column, which wraps in the room the others leave."""

from __future__ import annotations

import time

from rich import box
from rich.console import Console
from rich.table import Table

__all__ = ["table", "when", "wide", "WIDE"]

WIDE = 100
"""From this console width on, tables show their optional columns."""


def table(*columns: str, text: str) -> Table:
    """A table whose ``text`` column folds and whose other columns are never cut or wrapped."""
    out = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for name in columns:
        if name == text:
            out.add_column(name, overflow="fold", ratio=1, min_width=12)
        else:
            out.add_column(name, no_wrap=True)
    return out


def when(ts: float) -> str:
    """A local time, short: ``12-02 14:05``."""
    return time.strftime("%m-%d %H:%M", time.localtime(ts))


def wide(console: Console) -> bool:
    return console.width >= WIDE
