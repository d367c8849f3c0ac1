"""Jobs, their runs and the inbox, in ``lar.db`` (I4).

A job is a reminder (``remind``: its text is delivered when due, no model involved) or a request
(``run``: run as a normal task, traced, with only the tools granted when the job was made). A
request keeps what its creator had when it was made: the folder it works in (``folder``) and the
permission of each tool (``permissions``); whichever process fires it, it works there and is
never allowed more. A row that cannot be kept (a request without a folder, written by an older
Lar; a schedule no date matches) is ``invalid``: listed as such, reported once, never run.

Never twice for one due time, however many schedulers share the file: a run is claimed in one
``BEGIN IMMEDIATE`` transaction that checks the job is still due, records ``(job, due)`` under a
primary key and moves ``next_due`` past *now*. A second scheduler either waits for that
transaction and then finds the job no longer due, or loses on the key. Moving to the first due
time after now (not after the missed one) is what makes downtime end in one run, or none, never a
burst: a job whose due time passed more than ``grace_s`` ago is "missed" and follows its policy,
``once`` (run it now, once) or ``skip``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from lar.db import Database, shared
from lar.errors import LarError
from lar.scheduler.when import (
    ScheduleError,
    next_due,
    parse_schedule,
    read_spec,
    spec_problem,
    zone,
)

__all__ = ["Job", "JobRun", "JobStore", "InboxItem", "Claim", "GRACE_S", "JobError"]

Action = Literal["remind", "run"]
Missed = Literal["once", "skip"]
GRACE_S = 120.0
"""A due time passed by more than this when a scheduler looks was missed (downtime)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    what TEXT NOT NULL,
    action TEXT NOT NULL,
    spec TEXT NOT NULL,
    said TEXT NOT NULL,
    tz TEXT NOT NULL,
    start REAL NOT NULL,
    next_due REAL,
    missed TEXT NOT NULL,
    grants TEXT NOT NULL,
    status TEXT NOT NULL,
    created REAL NOT NULL,
    created_by TEXT NOT NULL,
    folder TEXT,
    permissions TEXT
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs(status, next_due);
CREATE TABLE IF NOT EXISTS job_runs (
    job_id INTEGER NOT NULL,
    due REAL NOT NULL,
    state TEXT NOT NULL,
    started REAL NOT NULL,
    finished REAL,
    result TEXT NOT NULL DEFAULT '',
    task_id TEXT,
    by TEXT NOT NULL,
    PRIMARY KEY (job_id, due)
);
CREATE TABLE IF NOT EXISTS idle_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    action TEXT NOT NULL,
    started REAL NOT NULL,
    state TEXT NOT NULL,
    result TEXT NOT NULL,
    task_id TEXT
);
CREATE TABLE IF NOT EXISTS inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER,
    created REAL NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    read INTEGER NOT NULL DEFAULT 0
);
"""


class JobError(LarError):
    """A job that does not exist or cannot be changed that way."""


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    what: str
    action: Action
    spec: str
    said: str
    tz: str
    start: float
    next_due: float | None
    missed: Missed
    grants: tuple[str, ...]
    status: Literal["active", "paused", "done", "invalid"]
    created: float
    created_by: Literal["user", "agent"]
    folder: str | None = None
    """Where a request works: its creator's folder (None for reminders)."""
    permissions: dict[str, str] | None = None
    """Its creator's ``tools.permissions`` when it was made (None: not recorded)."""

    @property
    def problem(self) -> str | None:
        """Why this job can never run as it is, or None."""
        if self.action == "run" and not self.folder:
            return "a request saved without the folder it works in (made by an older Lar)"
        try:
            place = zone(self.tz)
        except ScheduleError as exc:
            return str(exc)
        return spec_problem(self.spec, self.said, now=datetime.now(place))

    def describe(self) -> str:
        problem = self.problem
        if problem is not None:
            return f"invalid: {problem}"
        return read_spec(self.spec, self.said).describe(zone(self.tz))


@dataclass(frozen=True, slots=True)
class JobRun:
    job_id: int
    due: float
    state: str
    started: float
    finished: float | None
    result: str
    task_id: str | None
    by: str


@dataclass(frozen=True, slots=True)
class Claim:
    """A due time this scheduler won: ``run`` it, or record that it was ``skip``-ped."""

    job: Job
    due: float
    decision: Literal["run", "skip", "invalid"]


@dataclass(frozen=True, slots=True)
class InboxItem:
    id: int
    job_id: int | None
    created: float
    title: str
    body: str
    read: bool


_COLUMNS = (
    "id, what, action, spec, said, tz, start, next_due, missed, grants, status, created, "
    "created_by, folder, permissions"
)


def _job(row: Sequence[object]) -> Job:
    values = list(row)
    values[7] = _fit(values[7])  # type: ignore[arg-type]
    values[9] = tuple(json.loads(str(values[9])))
    values[14] = json.loads(str(values[14])) if values[14] is not None else None
    return Job(*values)  # type: ignore[arg-type]


def _fit(due: float | None) -> float | None:
    """A due time a date can hold, or None (a row written before periods were bounded)."""
    if due is None:
        return None
    try:
        datetime.fromtimestamp(due)
    except (ValueError, OverflowError, OSError):
        return None
    return due


class JobStore:
    """The jobs of one Lar home. ``by`` names this scheduler in the runs it claims."""

    def __init__(self, path: Path, *, by: str = "") -> None:
        self.path = path
        self.by = by or f"pid {os.getpid()}"
        self._db: Database = shared(path, _SCHEMA, "scheduler")
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns a ``jobs`` table made by an older Lar lacks (its requests, having no
        folder, read as invalid)."""
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(jobs)").fetchall()}
        for column in ("folder", "permissions"):
            if column not in columns:
                try:
                    self._db.execute(f"ALTER TABLE jobs ADD COLUMN {column} TEXT")
                except sqlite3.OperationalError:
                    pass  # another process added it meanwhile

    def close(self) -> None:
        self._db.close()

    # --- jobs --------------------------------------------------------------------------------

    def add(
        self,
        what: str,
        when: str,
        *,
        action: Action = "remind",
        tz: str | None = None,
        now: float | None = None,
        missed: Missed = "once",
        grants: Sequence[str] = (),
        created_by: Literal["user", "agent"] = "user",
        folder: str | Path | None = None,
        permissions: Mapping[str, str] | None = None,
    ) -> Job:
        """Read ``when`` (lar.scheduler.when) and store the job; ScheduleError if unreadable.
        A request (``action="run"``) needs ``folder``, the existing folder it works in, and
        keeps ``permissions``, its creator's ``tools.permissions``."""
        if action == "run":
            if folder is None:
                raise ScheduleError("a request job needs the folder it works in")
            folder = Path(folder).expanduser().resolve()
            if not folder.is_dir():
                raise ScheduleError(f"{folder}: not a folder; a request job works in one")
        if not what.strip():
            raise ScheduleError("a job needs a text: what to remind of, or what to do")
        if action not in ("remind", "run"):
            raise ScheduleError(f"action {action!r} is not 'remind' or 'run'")
        if missed not in ("once", "skip"):
            raise ScheduleError(f"missed-run policy {missed!r} is not 'once' or 'skip'")
        place = zone(tz)
        moment = time.time() if now is None else now
        schedule = parse_schedule(when, now=datetime.fromtimestamp(moment, place))
        due = next_due(schedule, after=moment, start=moment, tz=place)
        cur = self._db.execute(
            "INSERT INTO jobs (what, action, spec, said, tz, start, next_due, missed, grants, "
            "status, created, created_by, folder, permissions) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
            (
                what.strip(),
                action,
                schedule.spec,
                schedule.said,
                str(place),
                moment,
                due,
                missed,
                json.dumps(sorted(set(grants))),
                moment,
                created_by,
                str(folder) if folder is not None else None,
                json.dumps(dict(permissions or {}), sort_keys=True),
            ),
        )
        return self.get(int(cur.lastrowid or 0))

    def get(self, job_id: int) -> Job:
        row = self._db.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise JobError(f"no job {job_id} (see `lar schedule list`)")
        return _job(row)

    def jobs(self, *, everything: bool = False) -> list[Job]:
        where = "" if everything else "WHERE status != 'done'"
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM jobs {where} ORDER BY id").fetchall()
        return [_job(r) for r in rows]

    def pause(self, job_id: int) -> Job:
        job = self.get(job_id)
        if job.status == "done":
            raise JobError(f"job {job_id} is done; nothing to pause")
        self._db.execute("UPDATE jobs SET status = 'paused' WHERE id = ?", (job_id,))
        return self.get(job_id)

    def resume(self, job_id: int, *, now: float | None = None) -> Job:
        """Active again; a due time that passed while paused is not made up for."""
        job = self.get(job_id)
        if job.problem is not None:
            raise JobError(f"job {job_id} is invalid: {job.problem}; remove it and add it again")
        if job.status != "paused":
            raise JobError(f"job {job_id} is {job.status}, not paused")
        moment = time.time() if now is None else now
        due = job.next_due
        if due is not None and due < moment:
            due = next_due(read_spec(job.spec), after=moment, start=job.start, tz=zone(job.tz))
        self._db.execute(
            "UPDATE jobs SET status = ?, next_due = ? WHERE id = ?",
            ("active" if due is not None else "done", due, job_id),
        )
        return self.get(job_id)

    def remove(self, job_id: int) -> Job:
        job = self.get(job_id)
        with self._db.transaction() as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            db.execute("DELETE FROM job_runs WHERE job_id = ?", (job_id,))
        return job

    # --- due jobs ----------------------------------------------------------------------------

    def due(self, now: float) -> list[Job]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM jobs WHERE status = 'active' AND next_due <= ? "
            "ORDER BY next_due, id",
            (now,),
        ).fetchall()
        return [_job(r) for r in rows]

    def next_wake(self) -> float | None:
        row = self._db.execute("SELECT MIN(next_due) FROM jobs WHERE status = 'active'").fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def claim(self, job_id: int, now: float, *, grace_s: float = GRACE_S) -> Claim | None:
        """Win this job's current due time, or None when it is not due or another has it."""
        with self._db.transaction() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE id = ? AND status = 'active' AND next_due <= ?",
                (job_id, now),
            ).fetchone()
            if row is None:
                return None
            job = _job(row)
            assert job.next_due is not None
            due = job.next_due
            if job.problem is not None:  # reported once, then never due again
                db.execute(
                    "UPDATE jobs SET status = 'invalid', next_due = NULL WHERE id = ?", (job_id,)
                )
                db.execute(
                    "INSERT OR IGNORE INTO job_runs (job_id, due, state, started, finished, "
                    "result, by) VALUES (?, ?, 'invalid', ?, ?, ?, ?)",
                    (job_id, due, now, now, job.problem, self.by),
                )
                return Claim(job, due, "invalid")
            decision: Literal["run", "skip"] = (
                "skip" if now - due > grace_s and job.missed == "skip" else "run"
            )
            inserted = db.execute(
                "INSERT OR IGNORE INTO job_runs (job_id, due, state, started, by) "
                "VALUES (?, ?, ?, ?, ?)",
                (job_id, due, "running" if decision == "run" else "skipped", now, self.by),
            ).rowcount
            following = next_due(
                read_spec(job.spec), after=max(now, due), start=job.start, tz=zone(job.tz)
            )
            db.execute(
                "UPDATE jobs SET next_due = ?, status = ? WHERE id = ?",
                (following, "active" if following is not None else "done", job_id),
            )
            if not inserted:
                return None
            if decision == "skip":
                db.execute(
                    "UPDATE job_runs SET finished = ?, result = ? WHERE job_id = ? AND due = ?",
                    (now, "missed while no scheduler ran; skipped (policy: skip)", job_id, due),
                )
        return Claim(job, due, decision)

    def claim_now(self, job_id: int, now: float) -> Claim:
        """A run asked for by hand (``lar schedule run-now``); the schedule is unchanged.
        ``JobError`` for an invalid job: nothing runs."""
        job = self.get(job_id)
        if job.problem is not None:
            raise JobError(f"job {job_id} is invalid: {job.problem}; nothing ran")
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO job_runs (job_id, due, state, started, by) VALUES (?, ?, ?, ?, ?)",
                (job_id, now, "running", now, self.by + " (by hand)"),
            )
        return Claim(job, now, "run")

    def finish(self, claim: Claim, state: str, result: str, *, task_id: str | None = None) -> None:
        self._db.execute(
            "UPDATE job_runs SET state = ?, finished = ?, result = ?, task_id = ? "
            "WHERE job_id = ? AND due = ?",
            (state, time.time(), result, task_id, claim.job.id, claim.due),
        )

    def runs(self, job_id: int | None = None, *, limit: int = 50) -> list[JobRun]:
        where, params = ("WHERE job_id = ?", (job_id,)) if job_id is not None else ("", ())
        rows = self._db.execute(
            "SELECT job_id, due, state, started, finished, result, task_id, by FROM job_runs "
            f"{where} ORDER BY started DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [JobRun(*r) for r in rows]

    # --- idle mode ----------------------------------------------------------------------------

    def record_idle(
        self, action: str, started: float, state: str, result: str, task_id: str | None
    ) -> None:
        self._db.execute(
            "INSERT INTO idle_runs (action, started, state, result, task_id) "
            "VALUES (?, ?, ?, ?, ?)",
            (action, started, state, result, task_id),
        )

    def idle_runs(self, limit: int = 50) -> list[tuple[str, float, str, str, str | None]]:
        rows = self._db.execute(
            "SELECT action, started, state, result, task_id FROM idle_runs ORDER BY id DESC "
            "LIMIT ?",
            (limit,),
        ).fetchall()
        return [tuple(r) for r in rows]

    def last_activity(self) -> float | None:
        """When a person last started a task: the newest task no job and no idle action ran
        (None before any, or when this file has no tasks yet)."""
        if not self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tasks'"
        ).fetchone():
            return None
        row = self._db.execute(
            "SELECT MAX(created) FROM tasks WHERE id NOT IN "
            "(SELECT task_id FROM job_runs WHERE task_id IS NOT NULL) AND id NOT IN "
            "(SELECT task_id FROM idle_runs WHERE task_id IS NOT NULL)"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    # --- the inbox ---------------------------------------------------------------------------

    def deliver(self, job_id: int | None, title: str, body: str) -> InboxItem:
        cur = self._db.execute(
            "INSERT INTO inbox (job_id, created, title, body) VALUES (?, ?, ?, ?)",
            (job_id, time.time(), title, body),
        )
        return self.inbox_item(int(cur.lastrowid or 0))

    def inbox_item(self, item_id: int) -> InboxItem:
        row = self._db.execute(
            "SELECT id, job_id, created, title, body, read FROM inbox WHERE id = ?", (item_id,)
        ).fetchone()
        if row is None:
            raise JobError(f"no inbox item {item_id}")
        return InboxItem(row[0], row[1], row[2], row[3], row[4], bool(row[5]))

    def inbox(self, *, unread: bool = False, limit: int = 50) -> list[InboxItem]:
        where = "WHERE read = 0" if unread else ""
        rows = self._db.execute(
            f"SELECT id, job_id, created, title, body, read FROM inbox {where} "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [InboxItem(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    def mark_read(self, ids: Sequence[int] | None = None) -> int:
        if ids is None:
            return self._db.execute("UPDATE inbox SET read = 1 WHERE read = 0").rowcount
        marks = ",".join("?" * len(ids))
        return self._db.execute(
            f"UPDATE inbox SET read = 1 WHERE id IN ({marks})", tuple(ids)
        ).rowcount
