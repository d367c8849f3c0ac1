"""One of the processes in test_concurrency: write and recall until a deadline.

    python _concurrent_worker.py HOME WORKER SECONDS OUT

Appends "ok ID" after every acknowledged write and "error ..." for any failure to OUT, flushing
each line, so the test can check every acknowledged write afterwards.
"""

from __future__ import annotations

import random
import sqlite3
import sys
import time
from pathlib import Path

from lar.memory.embed import MiniLMEmbedder
from lar.memory.recall import recall
from lar.memory.store import MemoryStore, NewMemory

WORDS = "tea river guitar Porto lentils chess knife tram balcony Kyoto beagle ramen".split()


def main() -> None:
    home, worker, seconds, out = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
    rng = random.Random(worker)
    store = MemoryStore(home / "lar.db", MiniLMEmbedder(), index_dir=home / "memory")
    deadline = time.monotonic() + seconds
    i = 0
    with open(out, "a", buffering=1) as log:
        while time.monotonic() < deadline:
            i += 1
            text = f"Worker {worker} note {i}: {' '.join(rng.sample(WORDS, 3))}."
            try:
                if i % 10 == 0:  # a batch now and then, as consolidation writes
                    batch = [NewMemory(f"{text} part {j}", "episode") for j in range(5)]
                    for mid in store.add_many(batch, actor=f"worker-{worker}"):
                        log.write(f"ok {mid}\n")
                else:
                    log.write(f"ok {store.add(text, actor=f'worker-{worker}')}\n")
                recall(store, f"what about {rng.choice(WORDS)} and {rng.choice(WORDS)}?")
            except sqlite3.OperationalError as exc:
                log.write(f"error {exc}\n")
        store.close()
        log.write("done\n")


if __name__ == "__main__":
    main()
