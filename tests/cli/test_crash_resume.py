"""Crash test (issue 3, Must show 4): SIGKILL at every recorded step, then `lar resume`.

A scripted endpoint asks for six side-effecting tool calls, one per turn, then answers. For each
crash point the task is killed mid-run and resumed in a new process; the answer must be the same
as an uninterrupted run's, and the side-effect log must show every call exactly once.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import configure_mock, spawn_chat

from lar.testing import MockOpenAIServer, text_reply, tool_call_reply

STEPS = 6
TOOL = '''
from pathlib import Path
from lar import tool

@tool
def bump(name: str) -> str:
    """Record a side effect."""
    with Path("effects.log").open("a") as f:
        f.write(name + "\\n")
    return "bumped " + name
'''


def script(body: dict[str, Any]) -> dict[str, Any]:
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done < STEPS:
        return tool_call_reply("bump", {"name": f"step{done}"}, call_id=f"call_{done}")
    return text_reply(f"done after {done} steps")


def lar(home: Path, ws: Path, *args: str, crash_after: int | None = None):  # type: ignore[no-untyped-def]
    env = {"LAR_HOME": str(home), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "lar"]
    if crash_after is not None:
        command = [
            sys.executable,
            str(Path(__file__).with_name("_crash_after.py")),
            str(crash_after),
        ]
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ws,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    with MockOpenAIServer([script], repeat_last=True) as srv:
        yield srv


def setup(tmp: Path, url: str) -> tuple[Path, Path]:
    home, ws = tmp / "home", tmp / "ws"
    (home / "tools").mkdir(parents=True)
    ws.mkdir()
    (home / "tools" / "bump.py").write_text(TOOL)
    configure_mock(home, url)
    return home, ws


def test_uninterrupted_run_for_reference(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home, ws = setup(tmp_path, server.url)
    out = lar(home, ws, "run", "go")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"done after {STEPS} steps"
    assert (ws / "effects.log").read_text().split() == [f"step{i}" for i in range(STEPS)]
    tasks = lar(home, ws, "tasks")
    assert "succeeded" in tasks.stdout


# 1 (running) + 4 per tool call (assistant checkpoint, started, done, result checkpoint) = 25
@pytest.mark.parametrize("crash_after", range(1, 4 * STEPS + 2))
def test_killed_at_any_step_resume_finishes_without_repeating_a_call(
    server,
    tmp_path: Path,
    crash_after: int,  # type: ignore[no-untyped-def]
) -> None:
    home, ws = setup(tmp_path, server.url)
    first = lar(home, ws, "run", "go", crash_after=crash_after)
    assert first.returncode == -signal.SIGKILL, (first.returncode, first.stderr)
    match = re.search(r"task: (t_[0-9a-f]+)", first.stderr)
    assert match, first.stderr
    assert "interrupted" in lar(home, ws, "tasks").stdout  # killed: its lock is free

    second = lar(home, ws, "resume", match.group(1))
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == f"done after {STEPS} steps"
    effects = (ws / "effects.log").read_text().split() if (ws / "effects.log").exists() else []
    assert len(effects) == len(set(effects))  # no side effect twice
    # A kill between "started" and "done" leaves that call's outcome unknown: `bump` is not
    # idempotent and nobody can be asked, so it is reported, not run again (at most once).
    missing = [f"step{i}" for i in range(STEPS) if f"step{i}" not in effects]
    assert effects == [f"step{i}" for i in range(STEPS) if f"step{i}" not in missing]
    assert len(missing) <= 1
    assert ("unknown_outcome" in second.stderr) == bool(missing), second.stderr
    assert "succeeded" in lar(home, ws, "tasks").stdout
    again = lar(home, ws, "resume", match.group(1))
    assert again.returncode == 1 and "already ended (succeeded)" in again.stderr


def test_chat_resume_picks_up_the_latest_interrupted_task(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pexpect = pytest.importorskip("pexpect", reason="pexpect is a dev dependency")
    home, ws = setup(tmp_path, server.url)
    assert lar(home, ws, "run", "go", crash_after=7).returncode == -signal.SIGKILL
    child = spawn_chat(home, ws)
    try:
        child.expect("you> ")
        child.sendline("/resume")
        child.expect("resuming t_")
        # Killed right after step1 was recorded as started: its outcome is unknown, so the
        # user is asked (here it had not run yet, so "yes" is right).
        child.expect(r'bump\(name="step1"\) was running, so it may or may not have taken effect')
        child.expect("> ")
        child.sendline("yes")
        child.expect(f"done after {STEPS} steps")
        child.expect("you> ")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (ws / "effects.log").read_text().split() == [f"step{i}" for i in range(STEPS)]
