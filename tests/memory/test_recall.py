"""Hybrid recall on the real embedder: meaning, words, time, threshold, decay, logging."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from lar.evals.recall import METHODS, ingest, load_set, score
from lar.memory.embed import MiniLMEmbedder
from lar.memory.recall import recall
from lar.memory.store import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
DAY = 86400.0


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
def store(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[MemoryStore]:
    s = MemoryStore(tmp_path / "lar.db", minilm, index_dir=tmp_path / "memory")
    yield s
    s.close()


def ids(found: list) -> list[str]:  # type: ignore[type-arg]
    return [r.record.id for r in found]


def test_meaning_without_shared_words(store: MemoryStore) -> None:
    tea = store.add("Maya never drinks coffee; green tea is what she likes.", type="preference")
    store.add("The dispatcher service is written in Go.")
    found = recall(store, "Which hot beverage should I offer her?")
    assert ids(found)[:1] == [tea]
    assert found[0].vector_rank == 1 and found[0].bm25_rank is None


def test_rare_word_found_by_bm25(store: MemoryStore) -> None:
    store.add("Our router config lives in the infra repository.")
    key = store.add("The Zorblatt licence key is stored in the team vault.")
    found = recall(store, "zorblatt")
    assert ids(found)[:1] == [key] and found[0].bm25_rank == 1


def test_empty_beats_wrong(store: MemoryStore) -> None:
    store.add("Ana's dog Biscuit is a beagle.")
    store.add("The rent is 950 euros a month.")
    assert recall(store, "What is the boiling point of tungsten?") == []
    assert recall(store, "What is the boiling point of tungsten?", threshold=-1.0) != []


def test_named_day_picks_the_memory_written_then(store: MemoryStore) -> None:
    now = datetime(2026, 6, 30, 12).timestamp()
    dishes = {}
    for d, dish in [(3, "shakshuka"), (14, "a lentil dal"), (21, "vegetable ramen")]:
        at = datetime(2026, 3, d, 19).timestamp()
        dishes[d] = store.add(f"Tonight I cooked {dish}.", type="episode", created=at)
    found = recall(store, "What did I cook on March 14?", now=now)
    assert ids(found)[0] == dishes[14] and found[0].time_rank == 1


def test_superseded_forgotten_and_expired_are_not_recalled(store: MemoryStore) -> None:
    old = store.add("Maya lives in Lisbon.", type="fact")
    new = store.add("Maya lives in Porto.", type="fact", supersedes=old)
    gone = store.add("Maya's locker code is 4471.", type="fact")
    store.forget(gone)
    stale = store.add("Maya must buy milk today.", type="task")
    lives = ids(recall(store, "Where does Maya live?"))
    assert lives[0] == new and old not in lives
    assert recall(store, "locker code") == []
    assert stale in ids(recall(store, "buy milk", threshold=-1.0))
    # A task is kept 7 days from when it was stored; recalled as of 8 days on, it is gone.
    later = time.time() + 8 * DAY
    assert stale not in ids(recall(store, "buy milk", threshold=-1.0, now=later))


def test_type_decay_prefers_the_newer_task(store: MemoryStore) -> None:
    now = time.time()
    older = store.add("Send the invoice to the client.", type="task", created=now - 5 * DAY)
    newer = store.add("Send the invoice to the client!", type="task", created=now - 1 * DAY)
    found = recall(store, "What do I still have to send?", now=now)
    assert ids(found)[:2] == [newer, older]
    assert found[0].score > found[1].score


def test_every_recall_is_logged_with_scores(store: MemoryStore) -> None:
    m = store.add("Maya's sister Ana lives in Braga.")
    recall(store, "Where does Ana live?", session_id="s1")
    recall(store, "quantum chromodynamics", session_id="s1")
    rows = store.db.execute("SELECT session_id, query, results FROM memory_recalls").fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        ("s1", "Where does Ana live?"),
        ("s1", "quantum chromodynamics"),
    ]
    logged = json.loads(rows[0][2])
    assert logged[0]["id"] == m and logged[0]["cosine"] > 0.25 and logged[0]["score"] > 0
    assert json.loads(rows[1][2]) == []


def test_a_second_store_sees_new_memories_and_reuses_the_saved_index(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    a = MemoryStore(tmp_path / "lar.db", minilm, index_dir=tmp_path / "memory")
    first = a.add("The wifi password is on the fridge.")
    assert ids(recall(a, "where is the wifi password written?")) == [first]
    a.close()  # saves the index with its watermark
    assert (tmp_path / "memory" / "vectors-all-minilm-l6-v2.usearch").exists()
    b = MemoryStore(tmp_path / "lar.db", minilm, index_dir=tmp_path / "memory")
    c = MemoryStore(tmp_path / "lar.db", minilm, index_dir=tmp_path / "memory")
    second = c.add("The spare key is under the blue flower pot.")
    assert ids(recall(b, "where is the spare key hidden?"))[:1] == [second]
    assert b.vectors is not None and b.vectors.watermark == 2
    b.close()
    c.close()


def test_records_written_without_embedder_get_vectors_later(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    plain = MemoryStore(tmp_path / "lar.db")
    m = plain.add("Maya's favourite café is Fábrica.")
    plain.close()
    store = MemoryStore(tmp_path / "lar.db", minilm)
    found = recall(store, "Which coffee place do I like best?")
    assert ids(found) == [m] and found[0].cosine is not None
    store.close()


def test_lar_recall_beats_bm25_and_vectors_on_the_long_conversation_set(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    rs = load_set(ROOT / "evals" / "memory" / "longconv.yaml")
    assert len(rs.turns) >= 300 and len(rs.questions) >= 100
    assert {q.kind for q in rs.questions} == {"fact", "time", "multi", "update"}
    store = MemoryStore(tmp_path / "lar.db", minilm)
    ingest(rs, store)
    s = {name: score(rs, store, method).recall for name, method in METHODS.items()}
    store.close()
    lar, vectors, bm25 = s["Lar recall"], s["vectors alone"], s["BM25 alone"]
    # measured 0.941 vs 0.891 (vectors) and 0.714 (BM25, stemmed); stores this small are
    # searched exactly, so the figures repeat; the guard leaves a point of room
    assert lar["all"] >= vectors["all"] + 0.03 and lar["all"] >= bm25["all"] + 0.2
    # the named day decides these: measured 0.95 vs 0.80
    assert lar["time"] >= vectors["time"] + 0.1
    assert lar["fact"] >= vectors["fact"]
