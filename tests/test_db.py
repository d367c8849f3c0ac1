"""One connection per purpose per file in a process (issue 16: one safe way to open lar.db)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from lar import db as dbmod
from lar.agents.state import TaskStore
from lar.db import shared

SCHEMA = "CREATE TABLE IF NOT EXISTS counter (n INTEGER NOT NULL); "


def _db_descriptors(path: Path) -> int:
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


def test_one_connection_per_purpose_shared_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "lar.db"
    a, b = shared(path, SCHEMA, "tasks"), shared(path, SCHEMA, "tasks")
    other = shared(path, SCHEMA, "memory")
    assert a is b and a is not other
    a.close()
    b.execute("INSERT INTO counter VALUES (1)")  # still open for its other user
    b.close()
    assert shared(path, SCHEMA, "tasks") is not a  # the last close closed it; a new one opens
    other.close()


def test_stores_of_one_purpose_share_a_connection(tmp_path: Path) -> None:
    path = tmp_path / "lar.db"
    stores = [TaskStore(path) for _ in range(5)]
    assert len({id(s.db) for s in stores}) == 1
    assert _db_descriptors(path) == 1  # five stores, one descriptor of lar.db
    for s in stores:
        s.close()
    assert _db_descriptors(path) == 0


def test_transactions_of_threads_never_interleave(tmp_path: Path) -> None:
    db = shared(tmp_path / "lar.db", SCHEMA, "tasks")
    db.execute("INSERT INTO counter VALUES (0)")
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(100):
                with db.transaction():
                    (n,) = db.execute("SELECT n FROM counter").fetchone()
                    db.execute("UPDATE counter SET n = ?", (n + 1,))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and db.execute("SELECT n FROM counter").fetchone()[0] == 800
    db.close()


def test_a_replaced_file_gets_a_new_connection(tmp_path: Path) -> None:
    path = tmp_path / "lar.db"
    old = shared(path, SCHEMA, "tasks")
    old.execute("INSERT INTO counter VALUES (7)")
    dbmod.move_aside(path)
    new = shared(path, SCHEMA, "tasks")
    assert new is not old and new.execute("SELECT count(*) FROM counter").fetchone()[0] == 0
    old.close()
    new.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    path = tmp_path / "lar.db"
    parent = shared(path, SCHEMA, "tasks")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: must not reuse the parent's connection
        child = shared(path, SCHEMA, "tasks")
        child.execute("INSERT INTO counter VALUES (1)")
        os.write(write, b"same" if child is parent else b"own")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 10)
    os.waitpid(pid, 0)
    assert answer == b"own"
    assert parent.execute("SELECT count(*) FROM counter").fetchone()[0] == 1
    parent.close()
