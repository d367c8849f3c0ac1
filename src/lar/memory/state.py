"""Named state that outlives a session (A4 ``operative``): one text per key, in ``lar.db``'s
``working_memory`` table beside the last task's note (``operator:{id}:state``)."""

from __future__ import annotations

import time
from pathlib import Path

from lar.db import Database, shared
from lar.memory.agent_memory import WORKING_SCHEMA

__all__ = ["StateStore", "MAX_STATE_CHARS"]

MAX_STATE_CHARS = 4000
"""A state longer than this is cut (it goes into every prompt of its agent)."""


class StateStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.db.executescript(WORKING_SCHEMA)

    @classmethod
    def at(cls, path: Path) -> StateStore:
        return cls(shared(path, WORKING_SCHEMA, "memory"))

    def get(self, key: str) -> str:
        row = self.db.execute(
            "SELECT content FROM working_memory WHERE scope = ?", (key,)
        ).fetchone()
        return str(row[0]) if row else ""

    def put(self, key: str, content: str) -> None:
        self.db.execute(
            "INSERT INTO working_memory (scope, content, updated) VALUES (?, ?, ?) "
            "ON CONFLICT (scope) DO UPDATE SET content = excluded.content, "
            "updated = excluded.updated",
            (key, content[:MAX_STATE_CHARS], time.time()),
        )

    def close(self) -> None:
        self.db.close()
