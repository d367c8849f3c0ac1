"""The memory store: records, versions, BM25-only recall, audit, and tamper detection (M2, M6)."""

from __future__ import annotations

import sqlite3
import time
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
    assert [(p.memory_id, p.kind) for p in store.verify()] == [
        (ids[1], "fields_changed"),
        (ids[1], "state_changed"),
    ]


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


def test_a_record_edited_and_rechained_with_plain_sha256_is_caught(tmp_path: Path) -> None:
    """What sandboxed code could do to lar.db if it reached it: rewrite a memory and recompute
    every hash of the chain. Without the key (outside its reach) the seals no longer match."""
    from lar.memory.store import _GENESIS, _chain, _sha

    store = MemoryStore(tmp_path / "lar.db")
    ids = [store.add(f"fact number {i}") for i in range(4)]
    store.db.execute("UPDATE memories SET content = 'renew at http://evil' WHERE id = ?", (ids[1],))
    prev = _GENESIS
    rows = store.db.execute(
        "SELECT id, type, content, source, created, supersedes FROM memories ORDER BY seq"
    ).fetchall()
    for mid, mtype, content, source, created, supersedes in rows:
        fields = {
            "id": mid,
            "type": mtype,
            "sha256": _sha(content),
            "source": source,
            "created": created,
            "supersedes": supersedes,
        }
        chain = _chain(prev, fields)
        store.db.execute(
            "UPDATE memories SET sha256 = ?, prev_hash = ?, chain_hash = ? WHERE id = ?",
            (fields["sha256"], prev, chain, mid),
        )
        prev = chain
    problems = store.verify()
    # the seals, and the newest chain hash sealed outside the database (memory.head)
    assert {p.kind for p in problems} == {"state_changed", "chain_rewritten"}
    assert ids[1] in {p.memory_id for p in problems}
    assert (tmp_path / "memory.key").stat().st_mode & 0o777 == 0o600


def test_unforgetting_a_record_by_hand_is_named(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "lar.db")
    ids = [store.add(f"fact number {i}") for i in range(3)]
    store.forget(ids[0])
    assert store.verify() == []  # forgetting through Lar keeps the seal valid
    store.db.execute("UPDATE memories SET forgotten = 0 WHERE id = ?", (ids[0],))
    assert [(p.memory_id, p.kind) for p in store.verify()] == [(ids[0], "state_changed")]
    store.db.execute("UPDATE memories SET forgotten = 1 WHERE id = ?", (ids[0],))
    assert store.verify() == []  # the sealed state again


def test_a_dropped_append_only_trigger_is_named(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "lar.db")
    store.add("fact")
    store.db.execute("DROP TRIGGER memory_audit_no_delete")
    assert [(p.memory_id, p.kind) for p in store.verify()] == [("(schema)", "schema_changed")]


def test_an_older_database_is_sealed_once_and_then_checked(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "lar.db")
    mid = store.add("fact")
    store.db.execute("UPDATE memories SET seal = NULL")
    store.close()
    again = MemoryStore(tmp_path / "lar.db")
    assert again.verify() == []
    again.db.execute("UPDATE memories SET superseded_by = 'm_x' WHERE id = ?", (mid,))
    assert [p.kind for p in again.verify()] == ["state_changed"]


def test_a_database_from_before_dates_and_context_is_brought_up_to_date(tmp_path: Path) -> None:
    """A lar.db written before the stored/context/speaker columns and the stemmed index: its
    records are kept, resealed, indexed with stems, and count retention from their date."""
    path = tmp_path / "lar.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,
            content TEXT NOT NULL, sha256 TEXT NOT NULL, source TEXT NOT NULL DEFAULT '',
            confidence REAL NOT NULL DEFAULT 1.0, created REAL NOT NULL,
            access_level TEXT NOT NULL DEFAULT 'private', retention_days INTEGER,
            agent_id TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL DEFAULT '',
            supersedes TEXT, superseded_by TEXT, forgotten INTEGER NOT NULL DEFAULT 0,
            prev_hash TEXT NOT NULL, chain_hash TEXT NOT NULL, seal TEXT
        );
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, content='memories', content_rowid='seq'
        );
        CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row');
        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, content) VALUES (new.seq, new.content);
        END;
        """
    )
    db.close()
    # Records written the old way: through today's code with the old tables in place.
    from lar.memory import store as store_module

    real = store_module.MemoryStore._migrate
    store_module.MemoryStore._migrate = lambda self: None  # type: ignore[method-assign]
    try:
        old = MemoryStore(path)
        old.db.execute(
            "INSERT INTO memories (id, type, content, sha256, source, created, prev_hash, "
            "chain_hash) VALUES ('m_old', 'fact', 'We volunteered at the shelter.', "
            "'x', 'user', 1.0, 'p', 'c')"
        )
        old.close()
    finally:
        store_module.MemoryStore._migrate = real  # type: ignore[method-assign]
    store = MemoryStore(path)
    columns = {r[1] for r in store.db.execute("PRAGMA table_info(memories)")}
    assert {"context", "speaker", "stored"} <= columns
    assert store.db.execute("SELECT stored FROM memories").fetchone()[0] == 1.0
    # resealed: only the hand-made hash and chain are reported, not a broken seal
    assert "state_changed" not in {p.kind for p in store.verify()}
    # the rebuilt index is stemmed: "volunteering" finds "volunteered"
    assert [r.record.id for r in recall(store, "volunteering", now=2.0, log_it=False)] == ["m_old"]
    store.close()


def test_context_finds_a_reply_by_the_words_of_its_question(tmp_path: Path) -> None:
    from lar.memory.recall import bm25_ranked
    from lar.memory.store import NewMemory

    store = MemoryStore(tmp_path / "lar.db")
    reply, other = store.add_many(
        [
            NewMemory(
                "Melanie: We stayed calm and the kids were fine.",
                "episode",
                context="Caroline: How did your family handle the accident?",
                speaker="Melanie",
            ),
            NewMemory("Melanie: The kids were fine at the pool.", "episode", speaker="Melanie"),
        ]
    )
    seqs = bm25_ranked(store, "the accident", 5, now=time.time())
    ids = dict(store.db.execute("SELECT seq, id FROM memories").fetchall())
    assert [ids[s] for s in seqs] == [reply]
    assert store.speakers() == {"Melanie"}
    store.close()
