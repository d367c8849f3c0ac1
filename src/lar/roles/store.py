"""Role runs and circuit breakers, in ``lar.db`` (beside the evidence chains)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lar.db import Database, shared

__all__ = ["RoleStore", "Breakers", "RunRecord"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS role_runs (
    run_id TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    version TEXT NOT NULL,
    started REAL NOT NULL,
    finished REAL,
    outcome TEXT NOT NULL,
    final_state TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL DEFAULT '{}',
    result_hash TEXT NOT NULL DEFAULT '',
    report TEXT NOT NULL DEFAULT '',
    report_source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS role_runs_role ON role_runs(role, started);
CREATE TABLE IF NOT EXISTS role_breakers (
    role TEXT NOT NULL,
    step TEXT NOT NULL,
    failures INTEGER NOT NULL,
    opened_at REAL,
    PRIMARY KEY (role, step)
);
"""


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    role: str
    version: str
    started: float
    finished: float | None
    outcome: str
    final_state: str
    result: dict[str, Any]
    result_hash: str
    report: str
    report_source: str


class RoleStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: Database = shared(path, SCHEMA, "roles")

    def start(self, run_id: str, role: str, version: str) -> None:
        with self.db.transaction() as db:
            db.execute(
                "INSERT INTO role_runs (run_id, role, version, started, outcome) "
                "VALUES (?, ?, ?, ?, 'running')",
                (run_id, role, version, time.time()),
            )

    def finish(
        self,
        run_id: str,
        *,
        outcome: str,
        final_state: str,
        result: dict[str, Any],
        result_hash: str,
        report: str,
        report_source: str,
    ) -> None:
        with self.db.transaction() as db:
            db.execute(
                "UPDATE role_runs SET finished = ?, outcome = ?, final_state = ?, result = ?, "
                "result_hash = ?, report = ?, report_source = ? WHERE run_id = ?",
                (
                    time.time(),
                    outcome,
                    final_state,
                    json.dumps(result, sort_keys=True),
                    result_hash,
                    report,
                    report_source,
                    run_id,
                ),
            )

    def runs(self, role: str | None = None, limit: int = 20) -> list[RunRecord]:
        sql = "SELECT * FROM role_runs"
        params: tuple[Any, ...] = ()
        if role:
            sql += " WHERE role = ?"
            params = (role,)
        rows = self.db.execute(sql + " ORDER BY started DESC LIMIT ?", (*params, limit)).fetchall()
        return [self._record(r) for r in rows]

    def get(self, run_id: str) -> RunRecord | None:
        row = self.db.execute(
            "SELECT * FROM role_runs WHERE run_id = ? OR run_id LIKE ? ORDER BY started LIMIT 1",
            (run_id, run_id + "%"),
        ).fetchone()
        return self._record(row) if row else None

    def expired(self, role: str, retention_days: int, now: float | None = None) -> list[str]:
        cutoff = (now or time.time()) - retention_days * 86400
        rows = self.db.execute(
            "SELECT run_id FROM role_runs WHERE role = ? AND started < ?", (role, cutoff)
        ).fetchall()
        return [r[0] for r in rows]

    def delete(self, run_ids: list[str]) -> None:
        with self.db.transaction() as db:
            db.executemany("DELETE FROM role_runs WHERE run_id = ?", [(r,) for r in run_ids])

    @staticmethod
    def _record(row: Any) -> RunRecord:
        return RunRecord(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            row[6],
            json.loads(row[7] or "{}"),
            row[8],
            row[9],
            row[10],
        )


class Breakers:
    """Per role step: consecutive failures, and when the circuit opened. Kept in ``lar.db`` so a
    breaker opened by one run holds for the next one, in any process, until its reset time."""

    def __init__(self, store: RoleStore, role: str) -> None:
        self.db = store.db
        self.role = role

    def state(self, step: str, reset_ms: int, now: float | None = None) -> tuple[str, int]:
        row = self.db.execute(
            "SELECT failures, opened_at FROM role_breakers WHERE role = ? AND step = ?",
            (self.role, step),
        ).fetchone()
        if row is None:
            return "closed", 0
        failures, opened = row
        if opened is None:
            return "closed", failures
        now = time.time() if now is None else now
        return ("open" if (now - opened) * 1000 < reset_ms else "half_open"), failures

    def record(self, step: str, ok: bool, threshold: int, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self.db.transaction() as db:
            if ok:
                db.execute(
                    "DELETE FROM role_breakers WHERE role = ? AND step = ?", (self.role, step)
                )
                return
            row = db.execute(
                "SELECT failures, opened_at FROM role_breakers WHERE role = ? AND step = ?",
                (self.role, step),
            ).fetchone()
            failures = (row[0] if row else 0) + 1
            opened = row[1] if row else None
            if failures >= threshold or opened is not None:
                opened = now
            db.execute(
                "INSERT INTO role_breakers (role, step, failures, opened_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (role, step) DO UPDATE SET failures = excluded.failures, "
                "opened_at = excluded.opened_at",
                (self.role, step, failures, opened),
            )

    def all(self) -> list[tuple[str, int, float | None]]:
        return [
            (r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT step, failures, opened_at FROM role_breakers WHERE role = ? ORDER BY step",
                (self.role,),
            ).fetchall()
        ]
