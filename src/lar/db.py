"""The one way Lar opens ``lar.db``: private file mode, WAL, a generous busy timeout (M8).

Several processes (CLI, chat, server, scheduler) share the file; WAL lets readers proceed while
one writer writes, and the busy timeout makes a second writer wait instead of failing.

A process must never open and close a descriptor of a database file it already has open through
SQLite: closing any descriptor of a file drops every POSIX lock the process holds on it, and two
processes then write at once ("How To Corrupt An SQLite Database File", §2.2). So the file is
created with ``O_EXCL`` only when it does not exist yet (no connection can hold it then), and
existing files are only ``stat``-ed and ``chmod``-ed, never opened by hand.

Each purpose (tasks, memory, traces, the trace writer, notes, routing) has one connection per
file in a process, shared by every store of that purpose (``shared``): a server running many
sessions holds six connections, not six per session. A ``Database`` serializes its users with
a lock, and ``Database.transaction`` holds it from ``BEGIN IMMEDIATE`` to ``COMMIT``, so two
threads never interleave statements inside one transaction.

A file that is not a usable database raises :class:`StorageError` naming the file, what is
wrong and what to do; nothing is moved or rewritten unless the user asks (``lar doctor
--repair``).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lar.errors import LarError

__all__ = [
    "connect",
    "shared",
    "Database",
    "Rows",
    "StorageError",
    "check",
    "move_aside",
    "HEADER",
]

HEADER = b"SQLite format 3\x00"
_REPAIR = "run `lar doctor --repair` to move it aside and start a new one (the old file is kept)"


class StorageError(LarError):
    """A database file Lar cannot use; ``path`` is the file, the message says what to do."""

    def __init__(self, path: Path, problem: str, fix: str = _REPAIR) -> None:
        super().__init__(f"{path}: {problem}; {fix}")
        self.path = path
        self.problem = problem


def _prepare(path: Path) -> None:
    """Create the folder (0700) and the file (0600) if missing; refuse what cannot be opened."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            path, f"cannot create its folder ({exc.strerror})", "check LAR_HOME"
        ) from exc
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise StorageError(path, f"cannot create it ({exc.strerror})", "check LAR_HOME") from exc
    else:
        new = os.fstat(fd)
        os.close(fd)  # a new file: no SQLite connection of this process can hold it yet
        with _looked_lock:
            _looked.add((new.st_dev, new.st_ino))
        return
    try:
        info = path.stat()
    except OSError as exc:
        raise StorageError(path, f"cannot read it ({exc.strerror})", "check LAR_HOME") from exc
    if stat.S_ISDIR(info.st_mode):
        raise StorageError(
            path, "is a directory, not a database", "move it away; Lar creates a new database"
        )
    if not stat.S_ISREG(info.st_mode):
        raise StorageError(path, "is not a regular file", "move it away")
    if not os.access(path, os.R_OK | os.W_OK):
        raise StorageError(
            path,
            "is not readable and writable by this user",
            f"fix its permissions (chmod 600 {path}) or run Lar as its owner",
        )
    if info.st_mode & 0o077:
        os.chmod(path, 0o600)
    with _looked_lock:
        # The header is read through a descriptor of our own, which is closed again: safe only
        # before this process has any SQLite connection to the file, so once per file.
        if (info.st_dev, info.st_ino) in _looked:
            return
        problem = header_problem(path, info.st_size)
        if problem:
            raise StorageError(path, problem)
        _looked.add((info.st_dev, info.st_ino))


_looked: set[tuple[int, int]] = set()
_looked_lock = threading.Lock()


def header_problem(path: Path, size: int) -> str | None:
    """Why the first page of ``path`` is not that of a whole SQLite database, or ``None``.

    Cheap (100 bytes read), so every open can afford it; the full check is ``check``.
    """
    if size == 0:
        return None  # SQLite's empty database
    for attempt in range(2):
        try:
            with path.open("rb") as f:  # read-only, closed before SQLite opens the file
                head = f.read(100)
                size = os.fstat(f.fileno()).st_size  # after the header: another process may
                # have grown the file (and its header) since the caller looked
        except OSError as exc:
            return f"cannot be read ({exc.strerror})"
        problem = _header_problem(path, head, size)
        if problem is None or not problem.startswith("is truncated") or attempt:
            return problem
        time.sleep(0.05)  # a writer between its pages and its header: look once more
    return None  # pragma: no cover


def _header_problem(path: Path, head: bytes, size: int) -> str | None:
    if len(head) < 100 or not head.startswith(HEADER):
        return "is not an SQLite database (its header is wrong)"
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return "is not an SQLite database (its header is damaged)"
    change, pages, valid_for = (struct.unpack(">I", head[o : o + 4])[0] for o in (24, 28, 92))
    # While a WAL exists a checkpoint may be growing the file; only judge a quiet database.
    wal = path.with_name(path.name + "-wal")
    if pages and change == valid_for and not wal.exists() and size < pages * page_size:
        return f"is truncated ({size} of {pages * page_size} bytes)"
    return None


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating with mode 0600 if needed) and apply ``schema`` (idempotent DDL)."""
    _prepare(path)
    try:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StorageError(path, f"cannot be opened ({exc})", "check LAR_HOME") from exc
    try:
        db.execute("PRAGMA busy_timeout=30000")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(schema)
    except sqlite3.OperationalError as exc:
        db.close()
        if "locked" in str(exc) or "busy" in str(exc):
            raise StorageError(
                path, f"stayed locked by another process ({exc})", "try again"
            ) from exc
        raise StorageError(path, f"cannot be used ({exc})") from exc
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StorageError(path, f"is damaged ({exc})") from exc
    return db


class Database:
    """The connection of one purpose to one file, shared in this process (see ``shared``).

    Every statement runs under the lock; ``transaction`` keeps it for the whole transaction.
    ``close`` is counted: the connection closes when its last user closes it.
    """

    def __init__(self, key: tuple[int, int, str], conn: sqlite3.Connection) -> None:
        self._key = key
        self._conn = conn
        self._lock = threading.RLock()
        self._users = 1

    @property
    def row_factory(self) -> Any:
        return self._conn.row_factory

    @row_factory.setter
    def row_factory(self, factory: Any) -> None:
        self._conn.row_factory = factory

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Rows:
        with self._lock:
            return self._retrying(lambda: Rows(self._conn.execute(sql, params)))

    def executemany(self, sql: str, rows: Any) -> Rows:
        rows = list(rows)  # an iterator would be spent by a first, failed try
        with self._lock:
            return self._retrying(lambda: Rows(self._conn.executemany(sql, rows)))

    def executescript(self, script: str) -> Rows:
        with self._lock:
            return self._retrying(lambda: Rows(self._conn.executescript(script)))

    def _retrying(self, run: Callable[[], Rows]) -> Rows:
        """``run``, tried again while another process keeps the file busy, up to
        ``BUSY_WAIT_S``. SQLite's own busy wait does not cover every case in WAL mode (a
        connection's snapshot outrun by another process's commit fails at once), and a
        statement outside a transaction that failed so changed nothing: trying it again is
        safe. Inside a transaction the transaction decides (``transaction`` retries BEGIN)."""
        if self._conn.in_transaction:
            return run()
        deadline = time.monotonic() + BUSY_WAIT_S
        pause = 0.005
        while True:
            try:
                return run()
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.25)

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any exception), under the lock."""
        with self._lock:
            self._retrying(lambda: Rows(self._conn.execute("BEGIN IMMEDIATE")))
            try:
                yield self
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with _shared_lock:
            self._users -= 1
            if self._users > 0:
                return
            if _shared.get(self._key) is self:
                del _shared[self._key]
        with self._lock:
            self._conn.close()


BUSY_WAIT_S = 30.0
"""How long a statement waits, all tries together, for another process to let the file go."""


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "database is locked" in text or "database is busy" in text


class Rows:
    """A statement's result, read whole while the connection's lock is held: a cursor left
    half-read keeps a read snapshot open on the shared connection, and a write another thread
    then makes through it fails at once ("database is locked") once another process has
    committed since that snapshot."""

    __slots__ = ("_rows", "_at", "lastrowid", "rowcount")

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._rows = cursor.fetchall()
        self._at = 0
        self.lastrowid = cursor.lastrowid
        self.rowcount = cursor.rowcount
        cursor.close()

    def fetchone(self) -> Any:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[Any]:
        rest, self._at = self._rows[self._at :], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


_shared: dict[tuple[int, int, str], Database] = {}
_shared_lock = threading.Lock()


def shared(path: Path, schema: str, purpose: str) -> Database:
    """The process's connection for ``purpose`` to ``path``, opened (``connect``) on first use.

    Keyed by the file's identity, so a database moved aside and replaced gets a new connection.
    """
    with _shared_lock:
        try:
            info = path.stat()
        except OSError:
            info = None
        if info is not None:
            found = _shared.get((info.st_dev, info.st_ino, purpose))
            if found is not None:
                found._users += 1
                return found
        conn = connect(path, schema)
        info = path.stat()
        db = Database((info.st_dev, info.st_ino, purpose), conn)
        _shared[db._key] = db
        return db


def _forget_after_fork() -> None:
    """A forked child must not use its parent's connections (SQLite forbids it): it opens its
    own. The parent's stay referenced, never closed, so nothing of the parent's is touched."""
    global _shared, _shared_lock
    _forgotten.extend(_shared.values())
    _shared = {}
    _shared_lock = threading.Lock()


_forgotten: list[Database] = []
os.register_at_fork(after_in_child=_forget_after_fork)


def check(path: Path) -> list[str]:
    """``PRAGMA integrity_check`` of ``path``: ``[]`` when it is sound, else what is wrong."""
    if not path.exists():
        return []
    try:
        info = path.stat()
    except OSError as exc:
        return [f"cannot read it ({exc.strerror})"]
    if stat.S_ISDIR(info.st_mode):
        return ["is a directory, not a database"]
    if (info.st_dev, info.st_ino) not in _looked:  # see _prepare: no descriptor of ours closed
        problem = header_problem(path, info.st_size)
        if problem:
            return [problem]
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            rows = [r[0] for r in db.execute("PRAGMA integrity_check(20)")]
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def move_aside(path: Path) -> Path:
    """Rename ``path`` (and its -wal/-shm) to ``NAME.corrupt-TIMESTAMP``; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target
