"""Task state machine with checkpoints in SQLite (A5).

``pending → running → (waiting_user) → succeeded | failed``. After every step the conversation so
far is checkpointed, and every tool call is recorded as ``started`` and then ``done`` with its
result, so a killed process can be resumed (``lar resume ID``) without running a completed tool
call again. The database is ``$LAR_HOME/lar.db`` (WAL, mode 0600).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lar.db import shared
from lar.errors import LarError
from lar.redact import mask_strings
from lar.types import Message, ToolCall, ToolResult, from_dict, to_dict

__all__ = [
    "TaskStore",
    "TaskRecord",
    "TaskRecorder",
    "Status",
    "TaskNotFound",
    "TaskBusy",
    "TaskLock",
]

Status = Literal["pending", "running", "waiting_user", "interrupted", "succeeded", "failed"]
_FINAL: set[str] = {"succeeded", "failed"}
_LIVE: set[str] = {"pending", "running", "waiting_user"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    request TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    result TEXT,
    error TEXT,
    checkpoint TEXT
);
CREATE TABLE IF NOT EXISTS tool_calls (
    task_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    updated REAL NOT NULL,
    PRIMARY KEY (task_id, call_id)
);
"""


class TaskNotFound(LarError):
    pass


class TaskBusy(LarError):
    """The task is being run by another process (or another run in this one)."""


class TaskLock:
    """Held while a process runs a task: ``flock`` on ``locks/ID.lock`` beside lar.db.

    The kernel drops the lock when the process dies however it dies, so a task whose status
    says running but whose lock is free was killed. (A separate file: a descriptor of lar.db
    itself must never be closed by hand, see ``lar.db``.)
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for _ in range(5):
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                return True
            os.close(fd)  # released and unlinked meanwhile: lock the file that is there now
        return False

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                self.path.unlink()
            except OSError:
                pass
            os.close(fd)

    def held_elsewhere(self) -> bool:
        """Whether some run holds the lock now (checked by trying it, never waiting)."""
        if self.fd is not None:
            return False
        if not self.acquire():
            return True
        self.release()
        return False


@dataclass(slots=True)
class TaskRecord:
    id: str
    status: Status
    request: str
    model: str
    created: float
    updated: float
    result: str | None
    error: str | None


class TaskStore:
    """``redact`` masks secrets in everything written (requests, checkpoints, tool calls)."""

    def __init__(self, path: Path, *, redact: Callable[[str], str] | None = None) -> None:
        self.path = path
        self._redact = redact or (lambda text: text)
        self.db = shared(path, _SCHEMA, "tasks")

    def close(self) -> None:
        self.db.close()

    def lock(self, task_id: str) -> TaskLock:
        """Hold the task for this run; ``TaskBusy`` if another run holds it."""
        lock = TaskLock(self.path.parent / "locks" / f"{task_id}.lock")
        if not lock.acquire():
            raise TaskBusy(
                f"task {task_id} is running in another process; wait for it to end or stop it "
                "(Ctrl-C there) before resuming"
            )
        return lock

    def live(self, task_id: str) -> bool:
        """Whether a process is running the task now."""
        return TaskLock(self.path.parent / "locks" / f"{task_id}.lock").held_elsewhere()

    def _json(self, value: Any) -> str:
        """JSON with every string masked before encoding (see ``lar.redact.mask_strings``)."""
        value = json.loads(json.dumps(value, default=str))  # plain JSON types first
        return json.dumps(mask_strings(value, self._redact), ensure_ascii=False)

    def _opt(self, text: str | None) -> str | None:
        return None if text is None else self._redact(text)

    # --- tasks -------------------------------------------------------------------------------

    def create(self, task_id: str, request: str, model: str) -> None:
        now = time.time()
        self.db.execute(
            "INSERT INTO tasks (id, status, request, model, created, updated) "
            "VALUES (?, 'pending', ?, ?, ?, ?)",
            (task_id, self._redact(request), model, now, now),
        )

    def set_status(
        self, task_id: str, status: Status, *, result: str | None = None, error: str | None = None
    ) -> None:
        self.db.execute(
            "UPDATE tasks SET status = ?, result = COALESCE(?, result), error = ?, updated = ? "
            "WHERE id = ?",
            (status, self._opt(result), self._opt(error), time.time(), task_id),
        )

    def checkpoint(self, task_id: str, history: list[Message], state: dict[str, Any]) -> None:
        data = self._json({"history": to_dict(history), "state": state})
        self.db.execute(
            "UPDATE tasks SET checkpoint = ?, status = CASE WHEN status = 'pending' THEN "
            "'running' ELSE status END, updated = ? WHERE id = ?",
            (data, time.time(), task_id),
        )

    def get(self, task_id: str) -> TaskRecord:
        row = self.db.execute(
            "SELECT id, status, request, model, created, updated, result, error FROM tasks "
            "WHERE id = ?",
            (task_id,),
        ).fetchone()
        if row is None:
            raise TaskNotFound(f"no task {task_id!r} in {self.path}; see `lar tasks`")
        return TaskRecord(*row)

    def load_checkpoint(self, task_id: str) -> tuple[list[Message], dict[str, Any]]:
        self.get(task_id)
        row = self.db.execute("SELECT checkpoint, request FROM tasks WHERE id = ?", (task_id,))
        checkpoint, request = row.fetchone()
        if not checkpoint:
            return [Message("user", request)], {}
        data = json.loads(checkpoint)
        return [from_dict(Message, m) for m in data["history"]], data.get("state", {})

    def list(self, limit: int = 50) -> list[TaskRecord]:
        """Newest first. A task recorded as live whose run holds no lock was killed: it is
        listed as ``interrupted`` (what ``lar resume`` continues)."""
        rows = self.db.execute(
            "SELECT id, status, request, model, created, updated, result, error FROM tasks "
            "ORDER BY created DESC LIMIT ?",
            (limit,),
        ).fetchall()
        records = [TaskRecord(*r) for r in rows]
        for record in records:
            if record.status in _LIVE and not self.live(record.id):
                record.status = "interrupted"
        return records

    # --- tool calls --------------------------------------------------------------------------

    def call_started(self, task_id: str, call: ToolCall) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO tool_calls (task_id, call_id, name, arguments, status, updated)"
            " VALUES (?, ?, ?, ?, 'started', ?)",
            (
                task_id,
                call.id,
                call.name,
                self._json(call.arguments),
                time.time(),
            ),
        )

    def call_done(self, task_id: str, result: ToolResult) -> None:
        self.db.execute(
            "UPDATE tool_calls SET status = 'done', result = ?, updated = ? "
            "WHERE task_id = ? AND call_id = ?",
            (
                self._json(to_dict(result)),
                time.time(),
                task_id,
                result.call_id,
            ),
        )

    def call_started_before(self, task_id: str, call_id: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM tool_calls WHERE task_id = ? AND call_id = ?", (task_id, call_id)
        ).fetchone()
        return row is not None

    def call_result(self, task_id: str, call_id: str) -> ToolResult | None:
        row = self.db.execute(
            "SELECT result FROM tool_calls WHERE task_id = ? AND call_id = ? AND status = 'done'",
            (task_id, call_id),
        ).fetchone()
        return from_dict(ToolResult, json.loads(row[0])) if row else None


class TaskRecorder:
    """What the loop calls after each step: checkpoints and tool-call records of one task."""

    def __init__(self, store: TaskStore, task_id: str) -> None:
        self.store = store
        self.task_id = task_id

    def checkpoint(self, history: list[Message], state: dict[str, Any]) -> None:
        self.store.checkpoint(self.task_id, history, state)

    def call_started(self, call: ToolCall) -> None:
        self.store.call_started(self.task_id, call)

    def call_done(self, result: ToolResult) -> None:
        self.store.call_done(self.task_id, result)

    def completed(self, call_id: str) -> ToolResult | None:
        return self.store.call_result(self.task_id, call_id)

    def started(self, call_id: str) -> bool:
        """Recorded as started (by this or an earlier process) though not as done."""
        return self.store.call_started_before(self.task_id, call_id)

    def status(
        self, status: Status, *, result: str | None = None, error: str | None = None
    ) -> None:
        self.store.set_status(self.task_id, status, result=result, error=error)
