"""M8: three processes write and recall at once; nothing is locked out, nothing is lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lar.memory.embed import MiniLMEmbedder
from lar.memory.store import MemoryStore

WORKER = Path(__file__).with_name("_concurrent_worker.py")
# The issue asks for 60 s; LAR_CONCURRENCY_S shortens it for a quick local run.
SECONDS = float(os.environ.get("LAR_CONCURRENCY_S", "60"))


def test_three_processes_write_and_recall_for_a_minute(tmp_path: Path) -> None:
    logs = [tmp_path / f"worker{n}.log" for n in range(3)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(tmp_path), str(n), str(SECONDS), str(log)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for n, log in enumerate(logs)
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=SECONDS + 120)
        assert proc.returncode == 0, out.decode()
    acknowledged: list[str] = []
    for log in logs:
        lines = log.read_text().splitlines()
        assert lines[-1] == "done"
        errors = [line for line in lines if line.startswith("error")]
        assert errors == []  # no "database is locked", nor any other
        mine = [line.split()[1] for line in lines if line.startswith("ok ")]
        assert len(mine) >= 20, f"{log.name}: only {len(mine)} writes"
        acknowledged += mine
    store = MemoryStore(tmp_path / "lar.db", MiniLMEmbedder(), index_dir=tmp_path / "memory")
    present = {r.id for r in store.records(include_old=True)}
    assert set(acknowledged) <= present and len(acknowledged) == len(present)
    assert store.verify() == []  # the hash chain survived concurrent writers
    assert store.vectors is not None
    store.vectors.refresh()
    assert len(store.vectors) == len(present)  # every write also got its vector
    store.close()
