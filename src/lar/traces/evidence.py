"""Evidence chains of deterministic role runs (D7), in ``lar.db``.

Each step of a run records the component that did it (capability/tool@version), the SHA-256 of
its input and of its output (canonical JSON, so the same input gives the same hash on every run
and machine), when, and the verification it passed (output schema, a rule, a probe). Rows are
chained per run like memory records: each carries the hash of the previous row's chain hash and
its own fields, so editing, removing or reordering a row is found by ``verify``.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lar.db import Database, shared
from lar.errors import LarError

__all__ = ["EvidenceStore", "EvidenceRow", "EvidenceNotFound", "digest", "canonical"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS evidence (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,
    step TEXT NOT NULL,
    component TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    ts REAL NOT NULL,
    verified TEXT NOT NULL,
    outcome TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    chain_hash TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""

_FIELDS = (
    "seq",
    "state",
    "step",
    "component",
    "input_hash",
    "output_hash",
    "ts",
    "verified",
    "outcome",
)


class EvidenceNotFound(LarError):
    pass


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8")


def digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()


def _genesis(run_id: str) -> str:
    return hashlib.sha256(f"lar-evidence/1|{run_id}".encode()).hexdigest()


def _chain(prev: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256(prev.encode() + b"|" + canonical(fields)).hexdigest()


@dataclass(frozen=True, slots=True)
class EvidenceRow:
    run_id: str
    seq: int
    state: str
    step: str
    component: str
    input_hash: str
    output_hash: str
    ts: float
    verified: str
    outcome: str
    prev_hash: str
    chain_hash: str


class EvidenceStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: Database = shared(path, SCHEMA, "evidence")

    def append(
        self,
        run_id: str,
        *,
        state: str,
        step: str,
        component: str,
        input_value: Any,
        output_value: Any,
        verified: str,
        outcome: str,
    ) -> EvidenceRow:
        with self._db.transaction() as db:
            row = db.execute(
                "SELECT seq, chain_hash FROM evidence WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
                (run_id,),
            ).fetchone()
            seq, prev = (row[0] + 1, row[1]) if row else (1, _genesis(run_id))
            fields: dict[str, Any] = {
                "seq": seq,
                "state": state,
                "step": step,
                "component": component,
                "input_hash": digest(input_value),
                "output_hash": digest(output_value),
                "ts": round(time.time(), 3),
                "verified": verified,
                "outcome": outcome,
            }
            chain = _chain(prev, fields)
            db.execute(
                "INSERT INTO evidence (run_id, seq, state, step, component, input_hash, "
                "output_hash, ts, verified, outcome, prev_hash, chain_hash) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, *[fields[f] for f in _FIELDS], prev, chain),
            )
        return EvidenceRow(run_id=run_id, prev_hash=prev, chain_hash=chain, **fields)

    def chain(self, run_id: str) -> list[EvidenceRow]:
        rows = self._db.execute(
            "SELECT run_id, seq, state, step, component, input_hash, output_hash, ts, verified, "
            "outcome, prev_hash, chain_hash FROM evidence WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ).fetchall()
        if not rows:
            matches = self._db.execute(
                "SELECT DISTINCT run_id FROM evidence WHERE run_id LIKE ? LIMIT 2", (run_id + "%",)
            ).fetchall()
            if len(matches) == 1:
                return self.chain(matches[0][0])
            raise EvidenceNotFound(
                f"no evidence for run {run_id!r}"
                + (" (the prefix is ambiguous)" if matches else "")
            )
        return [EvidenceRow(*r) for r in rows]

    def verify(self, run_id: str) -> list[str]:
        """Each row whose chain does not hold, in words (empty: intact)."""
        rows = self.chain(run_id)
        problems = []
        prev = _genesis(rows[0].run_id)
        for expected_seq, row in enumerate(rows, 1):
            if row.seq != expected_seq:
                problems.append(f"step {expected_seq}: missing (the chain jumps to {row.seq})")
            if row.prev_hash != prev:
                problems.append(f"step {row.seq}: does not follow the step before it")
            fields = {f: getattr(row, f) for f in _FIELDS}
            if _chain(row.prev_hash, fields) != row.chain_hash:
                problems.append(
                    f"step {row.seq} ({row.step}): changed after it was recorded "
                    "(its fields do not match its chain hash)"
                )
            prev = row.chain_hash
        return problems

    def delete_runs(self, run_ids: list[str]) -> None:
        with self._db.transaction() as db:
            db.executemany("DELETE FROM evidence WHERE run_id = ?", [(r,) for r in run_ids])
