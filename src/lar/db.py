"""The one way Lar opens ``lar.db``: private file mode, WAL, a generous busy timeout (M8).

Several processes (CLI, chat, server, scheduler) share the file; WAL lets readers proceed while
one writer writes, and the busy timeout makes a second writer wait instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["connect"]


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating with mode 0600 if needed) and apply ``schema`` (idempotent DDL)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Create the file ourselves so it is never readable by others, not even for a moment.
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA busy_timeout=30000")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(schema)
    return db
