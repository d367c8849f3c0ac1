"""notes and todo (B1): short persistent notes and a to-do list in ``$LAR_HOME/lar.db``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from lar.db import Database, shared
from lar.tools.base import ToolContext, tool

__all__ = ["notes", "todo"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
"""


def _db(ctx: ToolContext) -> Database:
    if ctx.home is None:
        raise RuntimeError("notes need a Lar home directory; none is configured for this run")
    return shared(Path(ctx.home) / "lar.db", _SCHEMA, "notes")


def _listing(db: Database, kind: str) -> str:
    rows = db.execute(
        "SELECT id, text, done FROM notes WHERE kind = ? ORDER BY id", (kind,)
    ).fetchall()
    if not rows:
        return f"no {kind} items"

    def mark(done: int) -> str:
        return ("[x] " if done else "[ ] ") if kind == "todo" else ""

    return "\n".join(f"{i}. {mark(d)}{t}" for i, t, d in rows)


def _change(ctx: ToolContext, kind: str, action: str, text: str, item: int | None) -> str:
    db = _db(ctx)
    try:
        if action == "add":
            if not text.strip():
                raise ValueError("text is required to add an item")
            stored = ctx.redact(text.strip())
            cur = db.execute(
                "INSERT INTO notes (kind, text, created) VALUES (?, ?, ?)",
                (kind, stored, time.time()),
            )
            # What was kept, in the result: an answer of "added todo 1" told nobody what.
            return f"added {kind} {cur.lastrowid}: {stored}"
        if action == "list":
            return _listing(db, kind)
        if item is None:
            raise ValueError(f"'{action}' needs the item number (see action 'list')")
        row = db.execute(
            "SELECT text FROM notes WHERE id = ? AND kind = ?", (item, kind)
        ).fetchone()
        if row is None:
            raise ValueError(f"no {kind} item {item}")
        if action == "done":
            db.execute("UPDATE notes SET done = 1 WHERE id = ? AND kind = ?", (item, kind))
        else:
            db.execute("DELETE FROM notes WHERE id = ? AND kind = ?", (item, kind))
        return f"{kind} {item} {'done' if action == 'done' else 'removed'}: {row[0]}"
    finally:
        db.close()


@tool(broad=True)
def notes(
    action: Literal["add", "list", "remove"],
    ctx: ToolContext,
    text: str = "",
    item: int | None = None,
) -> str:
    """Keep the user's notes across sessions.

    Args:
        action: add, list or remove.
        text: The note (for add).
        item: The note number (for remove).
    """
    return _change(ctx, "note", action, text, item)


@tool(broad=True)
def todo(
    action: Literal["add", "list", "done", "remove"],
    ctx: ToolContext,
    text: str = "",
    item: int | None = None,
) -> str:
    """Keep the user's to-do list across sessions.

    Args:
        action: add, list, done or remove.
        text: The task (for add).
        item: The item number (for done and remove).
    """
    return _change(ctx, "todo", action, text, item)
