"""One home, many processes (issue 16, Must show 1): four `lar run` loops, a `lar trace list`
loop and a `lar memory add` loop for 60 s. No command fails, every task, trace, note and memory
that a command acknowledged is in lar.db afterwards, and `PRAGMA integrity_check` says ok.

Each run calls the `notes` tool (one more connection to lar.db in the same process) and keeps its
memory; before the fix, closing a descriptor of lar.db dropped the process's locks and three of
four runs died with "disk I/O error".
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _helpers import configure_mock

from lar.testing import MockOpenAIServer, text_reply, tool_call_reply

# The issue asks for 60 s; LAR_CONCURRENCY_S shortens it for a quick local run.
SECONDS = float(os.environ.get("LAR_CONCURRENCY_S", "60"))


def reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return text_reply("noted")
    request = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    tag = re.search(r"item-\d+-\d+", request)
    return tool_call_reply("notes", {"action": "add", "text": tag.group(0) if tag else request})


def lar(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home.parent)},
        cwd=home.parent,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


class Loop(threading.Thread):
    """Runs a command again and again until the deadline, keeping what each run said."""

    def __init__(self, home: Path, name: str, deadline: float) -> None:
        super().__init__(name=name, daemon=True)
        self.home, self.deadline = home, deadline
        self.done: list[subprocess.CompletedProcess[str]] = []
        self.failures: list[str] = []

    def args(self, n: int) -> list[str]:
        if self.name.startswith("run"):
            return ["run", "--quiet", f"remember item-{self.name[3:]}-{n}"]
        if self.name == "trace":
            return ["trace", "list"]
        return ["memory", "add", f"The {self.name} fact number {n} is about tea."]

    def run(self) -> None:
        n = 0
        while time.monotonic() < self.deadline and n < 500:
            n += 1
            out = lar(self.home, *self.args(n))
            self.done.append(out)
            if out.returncode != 0 or "Traceback" in out.stderr:
                self.failures.append(f"{self.args(n)} → {out.returncode}: {out.stderr[-800:]}")


def test_four_runs_trace_list_and_memory_add_share_one_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with MockOpenAIServer([reply], repeat_last=True) as srv:
        configure_mock(home, srv.url)
        deadline = time.monotonic() + SECONDS
        loops = [Loop(home, f"run{i}", deadline) for i in range(4)]
        loops += [Loop(home, "trace", deadline), Loop(home, "memory", deadline)]
        for loop in loops:
            loop.start()
        for loop in loops:
            loop.join(SECONDS + 300)
            assert not loop.is_alive()
    failures = [f for loop in loops for f in loop.failures]
    assert failures == []
    runs = [out for loop in loops[:4] for out in loop.done]
    assert len(runs) >= 8, "each run loop managed at least a couple of runs"
    assert all(out.stdout.strip() == "noted" for out in runs)
    memory_ids = [out.stdout.split()[0] for out in loops[5].done]
    assert len(memory_ids) >= 5

    db = sqlite3.connect(home / "lar.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tasks = dict(db.execute("SELECT request, status FROM tasks").fetchall())
        traces = {r[0] for r in db.execute("SELECT query FROM traces").fetchall()}
        notes = {r[0] for r in db.execute("SELECT text FROM notes").fetchall()}
        memories = {r[0] for r in db.execute("SELECT id FROM memories").fetchall()}
    finally:
        db.close()
    asked = [f"remember item-{i}-{n}" for i in range(4) for n in range(1, len(loops[i].done) + 1)]
    assert {r: tasks.get(r) for r in asked} == {r: "succeeded" for r in asked}
    assert set(asked) <= traces
    assert {r.removeprefix("remember ") for r in asked} <= notes
    assert set(memory_ids) <= memories
