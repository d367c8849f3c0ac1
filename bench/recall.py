"""Hybrid recall latency and insert rate at 10k and 100k memories.

    .venv/bin/python bench/recall.py [--sizes 10000,100000] [--queries 200] [--no-write]

Memories are sentences built from templates (2,000 distinct ones, encoded by the real
all-MiniLM-L6-v2), each stored many times with a different note number; its vector is the
sentence's vector plus a little noise, put in the embedding cache first so that filling the store
does not take hours of encoding. Each memory is indexed with the one before it as its context, as
the turns of an imported conversation are. Queries are other sentences, encoded before timing
(a warm embedding cache); the cost of encoding a new query is measured on its own row. Writes
the table into BENCHMARKS.md (section recall).
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _report import write_section  # noqa: E402

from lar.memory.embed import MiniLMEmbedder, text_hash  # noqa: E402
from lar.memory.recall import recall  # noqa: E402
from lar.memory.store import MemoryStore, NewMemory  # noqa: E402

PROFILE = False
WHO = ["I", "My sister", "My manager", "Tomás", "My neighbour", "The landlord", "Jun", "My mother"]
DID = ["bought", "cooked", "booked", "fixed", "painted", "sold", "planned", "read", "lost", "found"]
WHAT = [
    "a red bicycle",
    "vegetable curry",
    "a train to Porto",
    "the kitchen tap",
    "the balcony door",
    "an old guitar",
    "a trip to Kyoto",
    "a novel about trees",
    "the house keys",
    "a cheap flight",
    "lentil soup",
    "a second monitor",
    "running shoes",
    "a chess set",
    "the car battery",
    "a birthday cake",
    "a concert ticket",
    "the garden fence",
    "a winter coat",
    "a used laptop",
    "green tea",
    "a yoga mat",
    "the bathroom lamp",
    "a map of Lisbon",
    "a camera lens",
]
WHEN = [
    "on Monday",
    "last weekend",
    "after work",
    "in the morning",
    "before the holidays",
    "with friends",
    "for the first time",
    "again",
    "in a hurry",
    "very slowly",
]


def sentences(rng: random.Random, n: int) -> list[str]:
    combos = list(itertools.product(WHO, DID, WHAT, WHEN))
    rng.shuffle(combos)
    return [f"{w} {d} {x} {t}." for w, d, x, t in combos[:n]]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def run(
    size: int, base: list[str], base_vec: np.ndarray, queries: list[str], tmp: Path
) -> dict[str, float]:
    rng = np.random.default_rng(size)
    embedder = MiniLMEmbedder()
    store = MemoryStore(tmp / "lar.db", embedder, index_dir=tmp / "memory")
    assert store.embedder is not None
    texts = [f"{base[i % len(base)]} (note {i})" for i in range(size)]
    noise = rng.standard_normal((size, base_vec.shape[1])).astype(np.float32) * 0.02
    vecs = base_vec[np.arange(size) % len(base)] + noise
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store.db.executemany(
        "INSERT OR IGNORE INTO embedding_cache (model, sha256, vector) VALUES (?, ?, ?)",
        ((embedder.name, text_hash(t), v.tobytes()) for t, v in zip(texts, vecs, strict=True)),
    )
    store.embedder.encode(queries)  # warm: query vectors cached
    t0 = time.perf_counter()
    batch = 1000
    for start in range(0, size, batch):
        # Each memory is indexed with the one before it, as an imported conversation is.
        store.add_many(
            [
                NewMemory(t, "episode", "bench", context=texts[i - 1] if i else "")
                for i, t in enumerate(texts[start : start + batch], start)
            ]
        )
    insert_rate = size / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    if store.vectors is not None:
        store.vectors.refresh()
    build_s = time.perf_counter() - t0
    if store.vectors is not None:
        store.vectors.save()
    lat = []
    if PROFILE:
        import cProfile
        import pstats

        cProfile.runctx(
            "for q in queries: recall(store, q, k=5)", globals(), locals(), "/tmp/rprof"
        )
        pstats.Stats("/tmp/rprof").sort_stats("tottime").print_stats(12)
    for q in queries:
        t1 = time.perf_counter()
        recall(store, q, k=5)
        lat.append((time.perf_counter() - t1) * 1000)
    # One more memory at a time, as the agent writes them (encode hits the cache; index add).
    single = []
    for i in range(50):
        t1 = time.perf_counter()
        store.add(texts[i] + " again", type="fact", source="bench")
        single.append((time.perf_counter() - t1) * 1000)
    store.close()
    t0 = time.perf_counter()
    again = MemoryStore(tmp / "lar.db", embedder, index_dir=tmp / "memory")
    recall(again, queries[0], k=5)
    reopen_s = time.perf_counter() - t0
    again.close()
    return {
        "p50": statistics.median(lat),
        "p99": pct(lat, 99),
        "insert_rate": insert_rate,
        "single_ms": statistics.median(single),
        "build_s": build_s,
        "reopen_s": reopen_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    pool = sentences(rng, 2000 + args.queries)
    base, queries = pool[:2000], pool[2000:]
    embedder = MiniLMEmbedder()
    t0 = time.perf_counter()
    base_vec = embedder.encode(base)
    encode_rate = len(base) / (time.perf_counter() - t0)
    cold = []
    for q in queries[:30]:
        t1 = time.perf_counter()
        embedder.encode([q + " ?"])
        cold.append((time.perf_counter() - t1) * 1000)
    print(
        f"encoded {len(base)} sentences at {encode_rate:.0f}/s; a new query: "
        f"{statistics.median(cold):.1f} ms p50",
        flush=True,
    )
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            r = run(size, base, base_vec, queries, Path(tmp))
        print(f"{size}: {r}", flush=True)
        rows.append(
            f"| {size:,} | {r['p50']:.2f} | {r['p99']:.2f} | {r['insert_rate']:,.0f} | "
            f"{r['single_ms']:.1f} | {r['build_s']:.1f} | {r['reopen_s']:.2f} |"
        )
    table = "\n".join(
        [
            "### Recall latency and inserts",
            "",
            "`python bench/recall.py` (2 cores; hybrid = FTS5 BM25 + HNSW vectors + fusion, "
            f"{args.queries} queries with their vectors cached, k=5).",
            "",
            "| memories | recall p50 ms | recall p99 ms | inserts/s (batches of 1000) | "
            "one add() ms, encoding included | index build s | new process, first recall s |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            "Encoding a new query with all-MiniLM-L6-v2 (numpy) adds "
            f"{statistics.median(cold):.1f} ms p50 on top of recall; "
            f"bulk encoding runs at {encode_rate:.0f} sentences/s. "
            "The index is built once and saved beside lar.db; later processes load it.",
        ]
    )
    print(table)
    if not args.no_write:
        write_section("recall", table)


if __name__ == "__main__":
    main()
