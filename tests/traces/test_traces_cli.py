"""`lar trace`, `lar feedback`, `lar learn`, `lar stats` against a real lar.db (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lar import Agent
from lar.config import load_config
from lar.testing import MockOpenAIServer
from lar.traces import TraceStore


def lar(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LAR_HOME": str(home), "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


QUERIES = [
    "hi",
    "Write a Python function that reverses a list.",
    "thanks!",
    "Fix this bug in my SQL query.",
    "good morning",
]


def test_stats_and_plot_over_fifty_runs(
    lar_home: Path, two_models: tuple[MockOpenAIServer, MockOpenAIServer]
) -> None:
    with Agent(config=load_config(), memory=False) as agent:
        for i in range(55):
            agent.run(QUERIES[i % len(QUERIES)])
    out = lar(lar_home, "stats")
    assert out.returncode == 0, out.stderr
    assert "55 runs traced, 55 model calls" in out.stdout
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if "│" in line}
    assert set(rows) >= {"small-0.5b", "coder-1.5b"}
    # 33 trivial queries went to the small model, 22 code queries to the coder
    assert "│ 33 " in rows["small-0.5b"] and "│ 22 " in rows["coder-1.5b"]
    assert "energy: not measured" in out.stdout

    png = lar_home / "stats.png"
    out = lar(lar_home, "stats", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    import matplotlib.image

    pixels = matplotlib.image.imread(str(png))
    assert pixels.shape[:2] == (800, 1200)  # 12 × 8 inches at 100 dpi
    assert pixels[..., :3].std() > 0.05  # drawn on, not a blank canvas


def test_trace_show_feedback_and_list(
    lar_home: Path, two_models: tuple[MockOpenAIServer, MockOpenAIServer]
) -> None:
    with Agent(config=load_config()) as agent:
        result = agent.run("hi")
    out = lar(lar_home, "trace", "show", result.run_id[:6])
    assert out.returncode == 0, out.stderr
    assert "route: small (heuristic/simple: complexity 0.00 < 0.2: smallest (0.5B))" in out.stdout
    assert "llm #1: small-0.5b (openai), prompt 40, completion 8 tokens" in out.stdout
    assert "no feedback" in out.stdout

    assert lar(lar_home, "feedback", result.run_id, "+1", "short and right").returncode == 0
    out = lar(lar_home, "trace", "show", result.run_id)
    assert "feedback +1 'short and right'" in out.stdout

    bad = lar(lar_home, "feedback", result.run_id, "5")
    assert bad.returncode == 2 and "score must be +1 or -1 (got '5')" in bad.stderr
    missing = lar(lar_home, "feedback", "t_nope", "-1")
    assert missing.returncode == 1 and "'t_nope' matches no trace" in missing.stderr

    out = lar(lar_home, "trace", "list")
    assert result.run_id in out.stdout and "simple" in out.stdout and "+1" in out.stdout


def test_learn_changes_the_decision_and_the_next_run_uses_it(
    lar_home: Path, two_models: tuple[MockOpenAIServer, MockOpenAIServer]
) -> None:
    small, coder = two_models
    # Before learning, the heuristic sends a greeting to the smallest model.
    before = lar(lar_home, "run", "--json", "hello there")
    routed = [json.loads(x) for x in before.stdout.splitlines() if '"routed"' in x]
    assert routed[0]["model"] == "small" and routed[0]["router"] == "heuristic"
    # The user keeps marking the small model's greetings bad and the coder's good.
    store = TraceStore(lar_home / "lar.db")
    for model, verdict in (("small", -1), ("coder", 1)):
        with Agent(config=load_config(), model=model) as agent:
            for _ in range(5):
                agent.feedback(agent.run("hi").run_id, verdict)
    store.close()

    out = lar(lar_home, "learn")
    assert out.returncode == 0, out.stderr
    assert "simple: (heuristic) → coder (changed)" in out.stdout
    assert "used by the next run" in out.stdout

    after = lar(lar_home, "run", "--json", "hello there")
    assert after.returncode == 0, after.stderr
    routed = [json.loads(x) for x in after.stdout.splitlines() if '"routed"' in x]
    assert routed[0]["model"] == "coder" and routed[0]["router"] == "learned"
    assert routed[0]["reason"] == "learned: class simple → coder (composite 1.00 over 5 runs)"
    # and it really went there
    assert coder.requests[-1]["messages"][-1]["content"] == "hello there"


def test_doctor_writes_a_recommended_config_that_loads(lar_home: Path) -> None:
    out = lar(lar_home, "doctor")
    assert out.returncode == 0, out.stderr
    for row in ("cpu", "memory", "gpu", "sandbox", "energy collectors", "router"):
        assert f"│ {row}" in out.stdout
    path = lar_home / "config.recommended.yaml"
    assert f"recommended config written to {path}" in out.stdout.replace("\n", "")
    config = load_config(path)
    assert config.models[0].threads is not None and config.router.policy == "auto"
    assert not (lar_home / "config.yaml").exists()  # the live config is never touched
