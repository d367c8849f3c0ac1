"""Two real local models: the embedded 1.5B coder and the 0.5B served over the OpenAI API on
loopback by `lar model serve` in another process. The heuristic router sends a trivial query to
the smaller and a code query to the code-tagged larger one; killing the server makes the next
request fail over, and the traces say all of it (issue 5, Must show 1 and 4)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lar.engines.default_model import MODEL_PACKAGES, ensure_model

TINY = MODEL_PACKAGES["qwen2.5-coder-0.5b-instruct"]
BIG = "qwen2.5-coder-1.5b-instruct"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served_tiny(lar_home: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    ensure_model(lar_home / "models", TINY)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "lar", "model", "serve", TINY.name, "--port", str(port),
         "--n-ctx", "4096"],
        env={**os.environ, "LAR_HOME": str(lar_home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("lar model serve did not come up within 120 s")
    yield proc, url
    if proc.poll() is None:
        proc.terminate()
        proc.wait(30)
    if proc.stderr is not None:
        proc.stderr.close()


def lar(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "LAR_HOME": str(home), "COLUMNS": "250"},
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=home,
    )


def events(out: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def first(evs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(e for e in evs if e["type"] == kind)


def test_heuristic_router_and_failover_with_two_real_models(
    lar_home: Path, served_tiny: tuple[subprocess.Popen[str], str]
) -> None:
    proc, url = served_tiny
    (lar_home / "config.yaml").write_text(
        "model: default\n"
        "fallbacks: [default]\n"
        "models:\n"
        f"  - {{name: tiny, engine: openai, base_url: '{url}', model: {TINY.name}, retries: 0}}\n"
    )
    trivial = lar(lar_home, "run", "--json", "--no-memory", "Hi! How are you today?")
    assert trivial.returncode == 0, trivial.stderr
    evs = events(trivial)
    routed = first(evs, "routed")
    assert (routed["model"], routed["rule"]) == ("tiny", "simple")
    assert routed["reason"].endswith("smallest (0.5B)")
    called = first(evs, "model_called")
    assert called["model"] == TINY.name and called["engine"] == "openai"
    assert called["failover"] == [] and first(evs, "final")["stop_reason"] == "answer"

    code = lar(
        lar_home, "run", "--json", "--no-memory",
        "Write a Python function is_even(n) that returns True when n is even. Only the code.",
    )  # fmt: skip
    assert code.returncode == 0, code.stderr
    evs = events(code)
    routed = first(evs, "routed")
    assert (routed["model"], routed["rule"]) == ("default", "code")
    assert routed["reason"] == "code in the query: model tagged code (1.5B)"
    assert first(evs, "model_called")["model"] == BIG
    assert "def is_even" in first(evs, "final")["text"]

    for run, model, reason in (
        (trivial, "tiny", "smallest (0.5B)"),
        (code, "default", "model tagged code (1.5B)"),
    ):
        run_id = first(events(run), "run_started")["run_id"]
        shown = lar(lar_home, "trace", "show", run_id)
        assert shown.returncode == 0, shown.stderr
        assert f"route: {model} (heuristic/" in shown.stdout and reason in shown.stdout

    # The primary for trivial queries goes away mid-session: the next one fails over.
    proc.terminate()
    proc.wait(30)
    again = lar(lar_home, "run", "--json", "--no-memory", "Hi again!")
    assert again.returncode == 0, again.stderr
    evs = events(again)
    assert first(evs, "routed")["model"] == "tiny"
    called = first(evs, "model_called")
    assert called["model"] == BIG and called["source"] == "default"
    assert "tiny" in called["failover"][0]
    assert "note: answered by qwen2.5-coder-1.5b-instruct after" in again.stderr
    run_id = first(evs, "run_started")["run_id"]
    shown = lar(lar_home, "trace", "show", run_id)
    assert "failed over from: " in shown.stdout and "success no" in shown.stdout
