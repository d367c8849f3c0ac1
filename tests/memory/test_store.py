"""The memory store: records, versions, BM25-only recall, audit, and tamper detection (M2, M6)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lar.memory.recall import recall
from lar.memory.store import MemoryError_, MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "lar.db")
    yield s  # type: ignore[misc]
    s.close()


def test_add_search_and_versions(store: MemoryStore) -> None:
    a = store.add("The user prefers tea over coffee", type="preference")
    store.add("The project deadline is in March", type="fact")
    first, *_ = recall(store, "what does the user drink, tea or coffee?")
    assert first.record.id == a and first.score > 0 and first.cosine is None  # BM25 only
    b = store.add("The user now prefers green tea", type="preference", supersedes=a)
    current = [r.id for r in store.records()]
    assert a not in current and b in current  # superseded, never overwritten
    old = {r.id: r for r in store.records(include_old=True)}[a]
    assert old.superseded_by == b and old.content == "The user prefers tea over coffee"
    assert [r.record.id for r in recall(store, "tea")] == [b]
    with pytest.raises(MemoryError_, match="already superseded"):
        store.add("x", supersedes=a)
    assert [e[2] for e in store.audit()] == ["add", "add", "supersede"]


def test_forget_hides_but_keeps_history(store: MemoryStore) -> None:
    m = store.add("Bob's phone number is 555-0100")
    store.forget(m)
    assert recall(store, "phone") == [] and store.records() == []
    assert store.verify() == []
    assert store.audit()[-1][2:4] == ("forget", m)


def test_bad_input(store: MemoryStore) -> None:
    with pytest.raises(MemoryError_, match="unknown memory type 'opinion'; allowed: preference"):
        store.add("x", type="opinion")  # type: ignore[arg-type]
    with pytest.raises(MemoryError_, match="needs content"):
        store.add("   ")


def test_audit_log_is_append_only(store: MemoryStore) -> None:
    store.add("fact one")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.execute("UPDATE memory_audit SET actor = 'mallory'")


def test_editing_one_record_with_sqlite_names_exactly_that_record(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "lar.db")
    ids = [store.add(f"fact number {i}") for i in range(5)]
    store.close()
    raw = sqlite3.connect(tmp_path / "lar.db")
    raw.execute("UPDATE memories SET content = 'forged' WHERE id = ?", (ids[2],))
    raw.commit()
    raw.close()
    problems = MemoryStore(tmp_path / "lar.db").verify()
    assert [(p.memory_id, p.kind) for p in problems] == [(ids[2], "content_changed")]


def test_editing_content_and_its_hash_is_still_caught(tmp_path: Path) -> None:
    import hashlib

    store = MemoryStore(tmp_path / "lar.db")
    ids = [store.add(f"fact number {i}") for i in range(4)]
    forged = hashlib.sha256(b"forged").hexdigest()
    store.db.execute(
        "UPDATE memories SET content = 'forged', sha256 = ? WHERE id = ?", (forged, ids[1])
    )
    assert [(p.memory_id, p.kind) for p in store.verify()] == [(ids[1], "fields_changed")]


def test_deleting_a_record_is_detected(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "lar.db")
    ids = [store.add(f"fact number {i}") for i in range(4)]
    store.db.execute("DELETE FROM memories WHERE id = ?", (ids[1],))
    problems = store.verify()
    assert (ids[1], "missing_at_end") in [(p.memory_id, p.kind) for p in problems]
    assert (ids[2], "missing_before") in [(p.memory_id, p.kind) for p in problems]
    last = ids[3]
    store.db.execute("DELETE FROM memories WHERE id = ?", (last,))
    assert (last, "missing_at_end") in [(p.memory_id, p.kind) for p in store.verify()]


def test_file_mode_is_private(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "lar.db").close()
    assert oct((tmp_path / "lar.db").stat().st_mode)[-3:] == "600"
