"""`lar batch`: 200 requests on the local executor and on Ray (a local instance started by the
run) give the same results; a batch killed half-way and run again skips what finished; bad
lines are named before anything runs. The model is a deterministic endpoint on 127.0.0.1
that every worker shares."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _helpers import configure_mock

from lar.testing import MockOpenAIServer, adding_reply

reply = adding_reply


def need_ray() -> None:
    """Ray is an optional extra: skipped without it here, never in CI (install.sh has it)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI must run the Ray tests: install.sh installs lar[ray]")
        pytest.skip("the Ray executor is the optional extra lar[ray]")


def requests(path: Path, n: int = 200) -> Path:
    lines = []
    for i in range(n):
        text = f"add {i} and {i * 7}" if i % 2 else f"say hello to number {i}"
        lines.append(json.dumps({"id": f"r{i:03d}", "text": text}))
    path.write_text("\n".join(lines) + "\n")
    return path


def lar_batch(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LAR_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "lar", "batch", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=600,
    )  # fmt: skip


def results(path: Path) -> dict[str, tuple[Any, ...]]:
    out = {}
    for line in path.read_text().splitlines():
        item = json.loads(line)
        calls = tuple((c["name"], json.dumps(c["arguments"]), c["ok"]) for c in item["tool_calls"])
        out[item["id"]] = (item["ok"], item["text"], item["stop_reason"], calls, item["turns"])
    return out


def test_local_and_ray_give_the_same_results_for_200_requests(
    lar_home: Path, tmp_path: Path
) -> None:
    need_ray()
    reqs = requests(tmp_path / "reqs.jsonl")
    with MockOpenAIServer([reply], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        local = lar_batch(lar_home, tmp_path, str(reqs), "--out", "local.jsonl", "--parallel", "4")
        assert local.returncode == 0, local.stderr
        ray = lar_batch(
            lar_home, tmp_path, str(reqs), "--out", "ray.jsonl", "--executor", "ray",
            "--parallel", "2",
        )  # fmt: skip
        assert ray.returncode == 0, ray.stderr
    assert "ran 200" in local.stderr and "200 ok, 0 failed" in local.stderr
    assert "(ray, 2 at once)" in ray.stderr and "200 ok, 0 failed" in ray.stderr
    by_local, by_ray = results(tmp_path / "local.jsonl"), results(tmp_path / "ray.jsonl")
    assert len(by_local) == 200 and by_local == by_ray
    # the tool ran in every "add" request, on both
    assert (
        by_local["r007"][1] == "the sum is 7 + 49 = 56" and by_local["r007"][3][0][0] == "calculate"
    )
    assert by_local["r008"][1] == "echo: " + "say hello to number 8"[::-1]


def test_a_batch_killed_half_way_resumes_without_running_finished_requests_again(
    lar_home: Path, tmp_path: Path
) -> None:
    reqs = requests(tmp_path / "reqs.jsonl")
    out = tmp_path / "reqs.results.jsonl"

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.02)
        return reply(body)

    with MockOpenAIServer([slow], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        env = {**os.environ, "LAR_HOME": str(lar_home)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "lar", "batch", str(reqs), "--parallel", "2"],
            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            for _ in range(3000):  # bounded: at most ~5 minutes
                if out.exists() and out.read_text().count("\n") >= 60:
                    break
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL, "the batch ended before it could be killed"
        kept = out.read_text().splitlines()
        # a line cut off by a kill is dropped on resume: simulate one
        with out.open("a") as f:
            f.write('{"id": "r199", "ok": tr')
        finished_ids = {json.loads(line)["id"] for line in kept}
        assert 60 <= len(finished_ids) < 200
        served = len(srv.requests)
        again = lar_batch(lar_home, tmp_path, str(reqs), "--parallel", "2")
        assert again.returncode == 0, again.stderr
        rerun_calls = len(srv.requests) - served
    assert f"{len(finished_ids)} already in" in again.stderr
    assert f"{200 - len(finished_ids)} to run" in again.stderr
    lines = out.read_text().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == 200 and len(set(ids)) == 200
    # nothing that finished was asked again: an "add" request takes two model calls, others one
    left = [i for i in range(200) if f"r{i:03d}" not in finished_ids]
    assert rerun_calls == sum(2 if i % 2 else 1 for i in left)


def test_bad_lines_are_named_and_nothing_runs(lar_home: Path, tmp_path: Path) -> None:
    reqs = tmp_path / "bad.jsonl"
    reqs.write_text(
        '{"id": "a", "text": "fine"}\n'
        "\n"
        "{not json\n"
        '{"id": "b"}\n'
        '{"id": "a", "text": "again"}\n'
        "[1, 2]\n"
    )
    done = lar_batch(lar_home, tmp_path, str(reqs))
    assert done.returncode == 1
    assert "4 bad line(s); nothing was run" in done.stderr
    assert f"{reqs}:3: not JSON" in done.stderr
    assert f'{reqs}:4: "text" must be a non-empty string' in done.stderr
    assert f"{reqs}:5: id 'a' repeats line 1" in done.stderr
    assert f"{reqs}:6: expected" in done.stderr
    assert not (tmp_path / "bad.results.jsonl").exists()
