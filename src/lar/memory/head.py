"""The store's sealed head, kept outside the database (M8).

The hash chain inside ``lar.db`` shows a record edited or removed from the middle, but not the
newest records removed, nor the whole file truncated: what is left is a shorter chain that
verifies. So after every write Lar also records, in ``$LAR_HOME/memory.head``, how many records
the store held, the last one's sequence number and its chain hash, sealed with the store's key
(``memory.key``): whoever can rewrite ``lar.db`` without the key cannot move the head back, and
``verify`` compares the store with it.

The head only moves forward, and only from a store that still holds the head it replaces: a
store found shorter than its head keeps the alarm until the user accepts what is there
(``lar memory verify --accept``) — an emptied store is never taken for a fresh start. A store
that predates the head is trusted once, when the head is first written (as the seals were).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from lar.db import Database

__all__ = ["Head", "SealedHead", "HeadForged", "current", "holds", "problems"]


@dataclass(frozen=True, slots=True)
class Head:
    count: int
    """Records the store held (no record is ever deleted, so this only grows)."""
    seq: int
    """The newest record's sequence number."""
    chain: str
    """The newest record's chain hash."""


class HeadForged(Exception):
    """``memory.head`` does not match its seal, or cannot be read as one."""


class SealedHead:
    def __init__(self, path: Path, key: bytes) -> None:
        self.path = path
        self.key = key

    def _mac(self, head: Head) -> str:
        data = f"{head.count}:{head.seq}:{head.chain}".encode()
        return hmac.new(self.key, b"lar memory head " + data, hashlib.sha256).hexdigest()

    def read(self) -> Head | None:
        """The sealed head, None when there is none yet; ``HeadForged`` when it was edited."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise HeadForged(f"{self.path}: cannot read: {exc}") from None
        try:
            data = json.loads(text)
            head = Head(int(data["count"]), int(data["seq"]), str(data["chain"]))
            mac = str(data["mac"])
        except (ValueError, KeyError, TypeError):
            raise HeadForged(f"{self.path}: not a sealed head") from None
        if not hmac.compare_digest(mac, self._mac(head)):
            raise HeadForged(f"{self.path}: does not match its seal (edited outside Lar)")
        return head

    def write(self, head: Head, *, only_forward: bool = True) -> None:
        """Seal ``head``; with ``only_forward`` (writes), never over a newer head another
        process wrote meanwhile. A lock on the file orders concurrent writers."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if only_forward:
                try:
                    current = self.read()
                except HeadForged:
                    current = None
                if current is not None and current.seq >= head.seq:
                    return
            data = {
                "count": head.count,
                "seq": head.seq,
                "chain": head.chain,
                "mac": self._mac(head),
            }
            temp = self.path.with_name(self.path.name + ".tmp")
            with open(temp, "w", encoding="utf-8", opener=_private) as f:
                f.write(json.dumps(data) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, self.path)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


GENESIS = "0" * 64


def current(db: Database) -> Head:
    """The head of the store as it is now."""
    count, seq = db.execute("SELECT count(*), coalesce(max(seq), 0) FROM memories").fetchone()
    row = db.execute("SELECT chain_hash FROM memories WHERE seq = ?", (seq,)).fetchone()
    return Head(int(count), int(seq), str(row[0]) if row else GENESIS)


def holds(db: Database, head: Head) -> bool:
    """Whether the store still holds ``head`` (its record, unchanged, and as many before it)."""
    if head.seq == 0:
        return True
    row = db.execute("SELECT chain_hash FROM memories WHERE seq = ?", (head.seq,)).fetchone()
    if row is None or row[0] != head.chain:
        return False
    (before,) = db.execute("SELECT count(*) FROM memories WHERE seq <= ?", (head.seq,)).fetchone()
    return int(before) >= head.count


Kind = Literal["store_emptied", "newest_missing", "chain_rewritten", "head_forged"]


def problems(db: Database, sealed: SealedHead, store: Path) -> list[tuple[str, Kind, str]]:
    """``(where, kind, detail)`` for each way the store falls short of its sealed head."""
    try:
        head = sealed.read()
    except HeadForged as exc:
        return [("(head)", "head_forged", str(exc))]
    if head is None or holds(db, head):
        return []
    now = current(db)
    row = db.execute("SELECT id, chain_hash FROM memories WHERE seq = ?", (head.seq,)).fetchone()
    if row is not None and row[1] != head.chain:
        return [
            (
                str(row[0]),
                "chain_rewritten",
                f"its chain hash is not the one sealed in {sealed.path}: the chain was "
                "recomputed outside Lar",
            )
        ]
    if now.count == 0:
        return [
            (
                "(store)",
                "store_emptied",
                f"{store} holds no records, but {head.count} were stored (sealed in "
                f"{sealed.path}); it was truncated or replaced: restore it from a backup, or "
                "accept the loss with `lar memory verify --accept`",
            )
        ]
    return [
        (
            "(store)",
            "newest_missing",
            f"the newest records are gone: {head.count} were stored up to #{head.seq} (sealed "
            f"in {sealed.path}), {now.count} are left, the newest #{now.seq}; restore from a "
            "backup, or accept the loss with `lar memory verify --accept`",
        )
    ]
