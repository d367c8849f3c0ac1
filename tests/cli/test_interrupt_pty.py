"""Ctrl-C and SIGTERM (issue 16, Must show 2): `lar run` in a real terminal stops cleanly with
exit 130 and no traceback, the task is left `interrupted`, and `lar resume` finishes it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from _helpers import configure_mock

from lar.testing import MockOpenAIServer, text_reply, tool_call_reply

pexpect = pytest.importorskip("pexpect", reason="pexpect is a dev dependency")


class SlowModel:
    """The first model call hangs (until released), as a slow model does; later calls answer."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        # A sleep no other test runs (tests run in parallel, and others sleep 30 seconds too),
        # so the process listing below finds this test's tool and nothing else.
        self.sleep = f"sleep 30.{uuid.uuid4().int % 10**6:06d}"

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.calls == 1:
            self.release.wait(60)
        if body["messages"][-1]["role"] == "tool":
            return text_reply("finished after the tool")
        # Slow the first time only, so the resumed run is quick.
        first = f"echo ran > effects.log; {self.sleep}"
        command = f"test -f effects.log && echo again || {{ {first}; }}"
        return tool_call_reply("shell", {"command": command})


def wait_for(condition: Any, seconds: float = 30) -> None:
    """Poll ``condition`` until it holds (bounded: the test goes on and fails on its asserts)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def spawn_run(home: Path, ws: Path, *args: str) -> Any:
    return pexpect.spawn(
        sys.executable,
        ["-m", "lar", *args],
        cwd=str(ws),
        env={"LAR_HOME": str(home), "PATH": "/usr/bin:/bin", "TERM": "dumb"},
        encoding="utf-8",
        timeout=60,
        use_poll=True,  # select() fails on a descriptor numbered past 1023 late in a long run
    )


def lar(home: Path, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=ws,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _sandbox_processes(sleep: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if sleep in line and "ps -eo" not in line]


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("where", ["waiting for the model", "in a tool"])
def test_interrupted_run_exits_130_and_resumes(
    lar_home: Path, tmp_path: Path, how: str, where: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = SlowModel()
    if where == "in a tool":
        model.release.set()
    with MockOpenAIServer([model], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_run(lar_home, ws, "run", "--yes", "go")
        try:
            child.expect(r"task: (t_[0-9a-f]+)")
            task_id = child.match.group(1)
            if where == "in a tool":
                wait_for(lambda: (ws / "effects.log").exists())
            else:
                wait_for(lambda: model.calls > 0)
            if where == "in a tool":
                assert len(_sandbox_processes(model.sleep)) >= 1  # the tool's sleep is running
            if how == "SIGINT":
                child.sendintr()  # ^C through the terminal, as a user types it
            else:
                child.kill(signal.SIGTERM)
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
            model.release.set()
        output = child.before or ""
        assert child.exitstatus == 130, output
        assert " ok, " not in output  # the tool did not finish: it was stopped
        assert "Traceback" not in output and "RuntimeError" not in output
        assert f"lar resume {task_id}" in output
        listing = lar(lar_home, ws, "tasks").stdout
        assert re.search(rf"{task_id}\s+interrupted", listing), listing
        assert _sandbox_processes(model.sleep) == []  # the tool's process group was killed

        resumed = lar(lar_home, ws, "resume", "--yes", task_id)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip() == "finished after the tool"
    assert re.search(rf"{task_id}\s+succeeded", lar(lar_home, ws, "tasks").stdout)


def test_a_live_task_cannot_be_resumed_twice_and_a_killed_one_is_listed_interrupted(
    lar_home: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = SlowModel()
    with MockOpenAIServer([model], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_run(lar_home, ws, "run", "--yes", "go")
        try:
            child.expect(r"task: (t_[0-9a-f]+)")
            task_id = child.match.group(1)
            wait_for(lambda: model.calls > 0)
            listing = lar(lar_home, ws, "tasks").stdout
            assert re.search(rf"{task_id}\s+running", listing), listing
            second = lar(lar_home, ws, "resume", "--yes", task_id)
            assert second.returncode == 1
            assert "is running in another process" in second.stderr
            assert "Traceback" not in second.stderr
            child.kill(signal.SIGKILL)
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
            model.release.set()
        listing = lar(lar_home, ws, "tasks").stdout
        assert re.search(rf"{task_id}\s+interrupted", listing), listing
        resumed = lar(lar_home, ws, "resume", "--yes", task_id)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip() == "finished after the tool"


def test_ctrl_c_in_chat_stops_the_turn_and_keeps_the_session(
    lar_home: Path, tmp_path: Path
) -> None:
    from _helpers import spawn_chat

    model = SlowModel()
    with MockOpenAIServer([model], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_chat(lar_home, tmp_path)
        try:
            child.expect("you> ")
            child.sendline("go")
            wait_for(lambda: model.calls > 0)
            child.sendintr()
            child.expect(r"interrupted; continue with `lar resume (t_[0-9a-f]+)`")
            task_id = child.match.group(1)
            child.expect("you> ")  # the session goes on
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
            model.release.set()
        assert "Traceback" not in (child.before or "")
        listing = lar(lar_home, tmp_path, "tasks").stdout
        assert re.search(rf"{task_id}\s+interrupted", listing), listing
