"""Traces in SQLite (O4): runs, their steps, per-inference telemetry, feedback (L5).

Two tables in ``lar.db``: ``traces`` (one row per run: query, routing decision, outcome,
totals, reward, feedback, and its steps as a JSON array: route, recall, model calls, tool calls
with SHA-256 of their input and output, notices, in order) and ``telemetry`` (one row per
inference, O1).

A finished run is handed to a writer thread, which waits up to ``LINGER_S`` for more and writes
them together in one transaction (group commit), so a run never waits for SQLite nor for the
fsync of a WAL checkpoint. Reads wait for pending writes first, so what this process recorded is
always visible to it, and closing the store (or exiting the interpreter) writes what is pending;
only a process killed outright can lose the traces of its last ``LINGER_S``.
Everything is plain SQL: ``sqlite3 ~/.lar/lar.db 'select model, avg(energy_j) from telemetry
group by model'`` works.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lar.db import Database, shared
from lar.errors import LarError
from lar.telemetry.records import TelemetryRecord

__all__ = ["Step", "Trace", "TraceStore", "TraceNotFound", "SCHEMA"]

log = logging.getLogger("lar.traces")

LINGER_S = 0.5
"""How long the writer waits for more finished runs before a commit."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    session TEXT,
    query TEXT NOT NULL,
    query_class TEXT,
    complexity REAL,
    router TEXT,
    rule TEXT,
    reason TEXT,
    model TEXT,
    answered_by TEXT,
    outcome TEXT NOT NULL,
    success INTEGER NOT NULL,
    latency_ms REAL,
    turns INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost_usd REAL,
    energy_j REAL,
    reward REAL,
    answer TEXT,
    error TEXT,
    feedback INTEGER,
    feedback_comment TEXT,
    feedback_at REAL,
    steps TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS traces_created ON traces(created);
CREATE TABLE IF NOT EXISTS telemetry (
    id INTEGER PRIMARY KEY,
    trace_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    created REAL NOT NULL,
    model TEXT NOT NULL,
    engine TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    ttft_ms REAL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    token_method TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    energy_j REAL,
    power_w REAL,
    prefill_ms REAL,
    decode_ms REAL
);
CREATE INDEX IF NOT EXISTS telemetry_model ON telemetry(model, engine);
CREATE INDEX IF NOT EXISTS telemetry_trace ON telemetry(trace_id);
"""


class TraceNotFound(LarError):
    pass


@dataclass(slots=True)
class Step:
    kind: str  # route, recall, memory, context, model, tool, notice, error, final
    name: str
    offset_ms: float
    detail: dict[str, Any]
    duration_ms: float | None = None
    ok: bool | None = None
    input_hash: str | None = None
    output_hash: str | None = None


@dataclass(slots=True)
class Trace:
    id: str
    created: float
    query: str
    outcome: str
    success: bool
    session: str | None = None
    query_class: str | None = None
    complexity: float | None = None
    router: str | None = None
    rule: str | None = None
    reason: str | None = None
    model: str | None = None
    answered_by: str | None = None
    latency_ms: float | None = None
    turns: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    energy_j: float | None = None
    reward: float | None = None
    answer: str | None = None
    error: str | None = None
    feedback: int | None = None
    feedback_comment: str | None = None
    feedback_at: float | None = None
    steps: list[Step] = field(default_factory=list)
    telemetry: list[TelemetryRecord] = field(default_factory=list)
    steps_json: str | None = None
    """``steps`` already encoded (and masked) by the recorder."""


_STEP_FIELDS = (
    "kind", "name", "offset_ms", "duration_ms", "ok", "input_hash", "output_hash", "detail",
)  # fmt: skip


def steps_json(steps: Sequence[Step]) -> str:
    """Steps as a JSON array of objects (SQL: ``json_each(traces.steps)``)."""
    return json.dumps(
        [{f: getattr(s, f) for f in _STEP_FIELDS} for s in steps], ensure_ascii=False, default=str
    )


def steps_from_json(text: str) -> list[Step]:
    try:
        items = json.loads(text)
    except ValueError:
        return [Step("notice", "unreadable", 0.0, {"message": "steps could not be decoded"})]
    return [Step(**{f: item.get(f) for f in _STEP_FIELDS}) for item in items]


_TRACE_COLUMNS = [
    "id", "created", "session", "query", "query_class", "complexity", "router", "rule", "reason",
    "model", "answered_by", "outcome", "success", "latency_ms", "turns", "prompt_tokens",
    "completion_tokens", "cost_usd", "energy_j", "reward", "answer", "error", "feedback",
    "feedback_comment", "feedback_at",
]  # fmt: skip
_TELEMETRY_COLUMNS = [
    "trace_id", "turn", "created", "model", "engine", "latency_ms", "ttft_ms", "prompt_tokens",
    "completion_tokens", "token_method", "cost_usd", "energy_j", "power_w", "prefill_ms",
    "decode_ms",
]  # fmt: skip


class _Writer:
    """The background writer: a queue of finished traces, drained in batches."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cv = threading.Condition()
        self.pending: list[Trace | Callable[[], Trace]] = []
        self.writing = False
        self.closing = False
        self.urgent = False  # a reader is waiting: write now
        self.thread: threading.Thread | None = None

    def put(self, trace: Trace | Callable[[], Trace]) -> None:
        with self.cv:
            self.pending.append(trace)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="lar-traces", daemon=True)
                self.thread.start()
            if len(self.pending) == 1:
                # Only the first wakes the writer; while it lingers, waking it would only cost
                # a context switch per run.
                self.cv.notify_all()

    def _run(self) -> None:
        db = shared(self.path, SCHEMA, "trace-writer")
        try:
            while True:
                with self.cv:
                    while not self.pending and not self.closing:
                        self.cv.wait()
                    deadline = time.monotonic() + LINGER_S
                    while not (self.closing or self.urgent):
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        self.cv.wait(left)
                    self.urgent = False
                    batch, self.pending = self.pending, []
                    if not batch:
                        return  # closing, nothing left
                    self.writing = True
                try:
                    _write(db, [_built(t) for t in batch])
                except Exception as exc:  # noqa: BLE001 - never take a run down for a trace
                    log.warning("could not write %d trace(s) to %s: %s", len(batch), self.path, exc)
                finally:
                    with self.cv:
                        self.writing = False
                        self.cv.notify_all()
        finally:
            db.close()

    def flush(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        with self.cv:
            if self.pending:
                self.urgent = True
                self.cv.notify_all()
            while self.pending or self.writing:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("trace writer still busy after %.0f s", timeout_s)
                    return
                self.cv.wait(left)

    def close(self) -> None:
        with self.cv:
            self.closing = True
            self.cv.notify_all()
            thread = self.thread
        if thread is not None:
            thread.join(30)


def _built(trace: Trace | Callable[[], Trace]) -> Trace:
    if isinstance(trace, Trace):
        return trace
    built = trace()
    time.sleep(0)  # let a waiting run have the GIL between traces of a batch
    return built


def _write(db: Database, traces: Sequence[Trace]) -> None:
    """Write finished runs (with their steps) and their telemetry in one transaction."""
    columns = [*_TRACE_COLUMNS, "steps"]
    marks = ", ".join("?" * len(columns))
    rows = []
    for trace in traces:
        values = [getattr(trace, c) for c in _TRACE_COLUMNS]
        values[_TRACE_COLUMNS.index("success")] = int(trace.success)
        rows.append([*values, trace.steps_json or steps_json(trace.steps)])
    with db.transaction():
        db.executemany(
            f"INSERT OR REPLACE INTO traces ({', '.join(columns)}) VALUES ({marks})", rows
        )
        db.executemany(
            f"INSERT INTO telemetry ({', '.join(_TELEMETRY_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(_TELEMETRY_COLUMNS))})",
            [[getattr(r, c) for c in _TELEMETRY_COLUMNS] for t in traces for r in t.telemetry],
        )


class TraceStore:
    """``background=False`` writes each trace before ``record`` returns (used by tools that
    write once and exit)."""

    def __init__(self, path: Path, *, background: bool = True) -> None:
        self.path = path
        self.db = shared(path, SCHEMA, "traces")
        self.db.row_factory = sqlite3.Row
        self._writer = _Writer(path) if background else None
        if self._writer is not None:
            # Pending traces are written even if nobody calls close() (interpreter exit).
            self._finalizer = weakref.finalize(self, self._writer.close)

    def close(self) -> None:
        if self._writer is not None:
            self._finalizer()
        self.db.close()

    def flush(self) -> None:
        """Wait until every recorded trace is in the database."""
        if self._writer is not None:
            self._writer.flush()

    # --- writing ---------------------------------------------------------------------------

    def record(self, trace: Trace) -> None:
        """Queue a finished run (its steps and telemetry) for writing."""
        self.record_later(trace)

    def record_later(self, trace: Trace | Callable[[], Trace]) -> None:
        """Like ``record``; a callable is called to build the trace when it is written."""
        if self._writer is None:
            _write(self.db, [trace if isinstance(trace, Trace) else trace()])
        else:
            self._writer.put(trace)

    def feedback(self, trace_id: str, score: int, comment: str | None = None) -> None:
        """Attach the user's verdict (+1 or −1, L5); a later verdict replaces an earlier one."""
        if score not in (1, -1):
            raise LarError(f"feedback must be +1 or -1 (got {score!r})")
        self.flush()
        with self.db.transaction():
            cur = self.db.execute(
                "UPDATE traces SET feedback = ?, feedback_comment = ?, feedback_at = ? "
                "WHERE id = ?",
                (score, comment, time.time(), trace_id),
            )
        if cur.rowcount == 0:
            raise TraceNotFound(f"no trace {trace_id!r} (see `lar trace list`)")

    # --- reading ---------------------------------------------------------------------------

    def _trace(self, row: sqlite3.Row) -> Trace:
        data = {c: row[c] for c in _TRACE_COLUMNS}
        data["success"] = bool(data["success"])
        data["prompt_tokens"] = data["prompt_tokens"] or 0
        data["completion_tokens"] = data["completion_tokens"] or 0
        data["cost_usd"] = data["cost_usd"] or 0.0
        return Trace(**data)

    def recent(self, limit: int = 20, *, model: str | None = None) -> list[Trace]:
        self.flush()
        where, args = ("WHERE model = ?", [model]) if model else ("", [])
        rows = self.db.execute(
            f"SELECT * FROM traces {where} ORDER BY created DESC LIMIT ?", [*args, limit]
        ).fetchall()
        return [self._trace(r) for r in rows]

    def using_tools(self, prefix: str, limit: int = 10_000) -> list[Trace]:
        """The newest traces (with their steps) that called a tool whose name starts with
        ``prefix`` (``skill_``: the skills' traces, for the optimizer)."""
        self.flush()
        rows = self.db.execute(
            "SELECT * FROM traces t WHERE EXISTS (SELECT 1 FROM json_each(t.steps) s WHERE "
            "json_extract(s.value, '$.kind') = 'tool' AND "
            "substr(json_extract(s.value, '$.name'), 1, ?) = ?) ORDER BY created DESC LIMIT ?",
            (len(prefix), prefix, limit),
        ).fetchall()
        out = []
        for row in rows:
            trace = self._trace(row)
            trace.steps = steps_from_json(row["steps"])
            out.append(trace)
        return out

    def children(self, trace_id: str) -> list[Trace]:
        """The runs a delegate run started (``<id>.<task id>``), oldest first."""
        self.flush()
        rows = self.db.execute(
            "SELECT * FROM traces WHERE id > ? AND id < ? ORDER BY created",
            (trace_id + ".", trace_id + "/"),  # "/" sorts right after "."
        ).fetchall()
        return [self._trace(r) for r in rows if "." not in r["id"][len(trace_id) + 1 :]]

    def get(self, trace_id: str) -> Trace:
        self.flush()
        row = self.db.execute("SELECT * FROM traces WHERE id = ?", (trace_id,)).fetchone()
        if row is None:
            # a prefix names a run, not its children (``<id>.<task>``), unless it has a dot
            own = "" if "." in trace_id else " AND instr(id, '.') = 0"
            matches = self.db.execute(
                f"SELECT * FROM traces WHERE id LIKE ?{own} ORDER BY created DESC LIMIT 2",
                (trace_id + "%",),
            ).fetchall()
            if len(matches) != 1:
                what = "is ambiguous" if matches else "matches no trace"
                raise TraceNotFound(f"{trace_id!r} {what} (see `lar trace list`)")
            row = matches[0]
        trace = self._trace(row)
        trace.steps = steps_from_json(row["steps"])
        trace.telemetry = self.telemetry(trace_id=trace.id)
        return trace

    def telemetry(
        self, *, trace_id: str | None = None, since: float | None = None
    ) -> list[TelemetryRecord]:
        self.flush()
        clauses: list[str] = []
        args: list[Any] = []
        if trace_id is not None:
            clauses.append("trace_id = ?")
            args.append(trace_id)
        if since is not None:
            clauses.append("created >= ?")
            args.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.db.execute(
            f"SELECT {', '.join(_TELEMETRY_COLUMNS)} FROM telemetry {where} ORDER BY id", args
        ).fetchall()
        return [TelemetryRecord(*r) for r in rows]

    def count(self) -> int:
        self.flush()
        return int(self.db.execute("SELECT count(*) FROM traces").fetchone()[0])

    def samples(self) -> Sequence[sqlite3.Row]:
        """(query_class, model, success, feedback, reward) of every routed run, for learning."""
        self.flush()
        return self.db.execute(
            "SELECT query_class, model, success, feedback, reward FROM traces "
            "WHERE query_class IS NOT NULL AND model IS NOT NULL"
        ).fetchall()
