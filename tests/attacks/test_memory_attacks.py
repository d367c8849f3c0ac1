"""Attacks on audited memory: whoever can write ``lar.db`` removes the newest records (the
append-only trigger dropped and put back) or empties the file. The chain inside the database
cannot show either; the head sealed outside it (``memory.head``) does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lar.memory.store import MemoryStore


def _verify(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", "memory", "verify", *args],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _stored(home: Path, n: int) -> list[str]:
    store = MemoryStore(home / "lar.db")
    ids = [store.add(f"fact number {i}: the user keeps bees") for i in range(n)]
    store.close()
    return ids


def test_verify_reports_a_database_truncated_to_nothing(lar_home: Path) -> None:
    _stored(lar_home, 3)
    for name in ("lar.db", "lar.db-wal", "lar.db-shm"):
        path = lar_home / name
        if path.exists():
            path.write_bytes(b"")
    done = _verify(lar_home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "store_emptied" in done.stdout and "3 were stored" in done.stdout
    assert "ok:" not in done.stdout and "Traceback" not in done.stderr
    # writing on is not a fresh start: the alarm stays until the user accepts the loss
    store = MemoryStore(lar_home / "lar.db")
    store.add("a new fact after the loss")
    assert [p.kind for p in store.verify()] == ["newest_missing"]
    store.close()
    accepted = _verify(lar_home, "--accept")
    assert accepted.returncode == 0, accepted.stdout
    assert "ok: 1 records" in accepted.stdout


def test_verify_reports_the_newest_record_deleted_behind_the_triggers_back(
    lar_home: Path,
) -> None:
    ids = _stored(lar_home, 4)
    store = MemoryStore(lar_home / "lar.db")
    db = store.db
    db.execute("DROP TRIGGER memory_audit_no_delete")
    db.execute("DELETE FROM memories WHERE id = ?", (ids[-1],))
    db.execute("DELETE FROM memory_audit WHERE memory_id = ?", (ids[-1],))
    db.execute(
        "CREATE TRIGGER memory_audit_no_delete BEFORE DELETE ON memory_audit BEGIN "
        "SELECT RAISE(ABORT, 'the memory audit log is append-only'); END"
    )
    store.close()
    done = _verify(lar_home)
    assert done.returncode == 1, done.stdout
    assert "newest_missing" in done.stdout
    assert "4 were stored" in done.stdout and "3 are left" in done.stdout


def test_a_head_edited_to_match_a_shorter_store_is_named(lar_home: Path) -> None:
    _stored(lar_home, 2)
    head = lar_home / "memory.head"
    data = json.loads(head.read_text())
    data["count"], data["seq"] = 1, 1
    head.write_text(json.dumps(data))
    done = _verify(lar_home)
    assert done.returncode == 1
    assert "head_forged" in done.stdout and "does not match its seal" in done.stdout


def test_two_writers_on_one_store_keep_the_head_in_step(lar_home: Path) -> None:
    a = MemoryStore(lar_home / "lar.db")
    b = MemoryStore(lar_home / "lar.db", key=a.key)
    for i in range(5):
        (a if i % 2 else b).add(f"fact {i} about the user's garden")
    assert a.verify() == [] and b.verify() == []
    assert json.loads((lar_home / "memory.head").read_text())["count"] == 5
    a.close()
    b.close()
    assert _verify(lar_home).returncode == 0
