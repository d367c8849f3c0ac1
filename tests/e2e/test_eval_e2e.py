"""`lar eval` on the real embedded model, both tracks (issue 6, first step)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "evals" / "fixture_suite.jsonl"


def test_lar_eval_runs_a_suite_on_the_embedded_model(lar_home: Path, tmp_path: Path) -> None:
    out_json = tmp_path / "results.jsonl"
    out = subprocess.run(
        [sys.executable, "-m", "lar", "eval", "--suite", str(FIXTURE), "--category", "single",
         "--track", "both", "--json", str(out_json)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        env={**os.environ, "LAR_HOME": str(lar_home), "COLUMNS": "200"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "default — native track" in out.stdout and "default — protocol track" in out.stdout
    results = {r["track"]: r for r in map(json.loads, out_json.read_text().splitlines())}
    assert set(results) == {"native", "protocol"}
    assert all(r["tokens"] > 0 and r["latency_ms"] > 0 for r in results.values())
    # The protocol track gets the weather call right (greedy decoding: deterministic).
    protocol = results["protocol"]
    assert protocol["ok"], protocol["why"]
    assert protocol["calls"][0][0] == "get_weather" and protocol["calls"][0][1]["city"] == "Lisbon"
