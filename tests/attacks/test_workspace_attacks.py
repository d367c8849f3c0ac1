"""A staged run (lar.tools.staging) works on a copy of the workspace; the user goes on editing
the workspace while it runs and while they are asked. What the user did meanwhile survives the
run: only what the run changed is applied, and where both changed one path the user's version is
kept and the conflict is reported to the user and the model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import call

from lar.tools import sandbox
from lar.tools.base import ToolContext
from lar.tools.builtin import builtin_tools
from lar.tools.builtin import code as code_tools
from lar.tools.executor import ToolExecutor
from lar.tools.staging import Changes
from lar.types import ToolCall, ToolResult

pytestmark = pytest.mark.skipif(
    sandbox.isolation_level() != "bubblewrap", reason="staging needs bubblewrap"
)

RUN = "echo run > made.txt; echo run > both.txt; rm gone.txt; rm -r build"


def _workspace(ws: Path) -> None:
    ws.mkdir(exist_ok=True)
    for name in ("edited.txt", "both.txt", "gone.txt", "untouched.txt"):
        (ws / name).write_text(f"{name}: original\n")
    (ws / "build").mkdir()
    (ws / "build" / "x.o").write_text("object\n")


def _edit_during_the_run(monkeypatch: pytest.MonkeyPatch, edit: Callable[[], None]) -> None:
    """The user's edits land after the copy was made and before the run ends."""
    real = code_tools.run_sandboxed

    async def running(argv: list[str], policy: Any, *bridge: Any) -> Any:
        edit()
        return await real(argv, policy, *bridge)

    monkeypatch.setattr(code_tools, "run_sandboxed", running)


def _user_during_the_run(ws: Path) -> None:
    (ws / "edited.txt").write_text("edited.txt: the user's edit\n")
    (ws / "created_by_user.txt").write_text("the user's new file\n")
    (ws / "untouched.txt").unlink()


def _user_while_asked(ws: Path) -> None:
    (ws / "both.txt").write_text("both.txt: the user's version\n")
    (ws / "notes").mkdir()
    (ws / "notes" / "draft.txt").write_text("written while the approval waited\n")
    (ws / "build" / "keep.me").write_text("added to a folder the run deletes\n")


def _assert_the_users_work_survived(ws: Path) -> None:
    assert (ws / "edited.txt").read_text() == "edited.txt: the user's edit\n"
    assert (ws / "created_by_user.txt").read_text() == "the user's new file\n"
    assert not (ws / "untouched.txt").exists()  # deleted by the user; the run never touched it
    assert (ws / "notes" / "draft.txt").read_text() == "written while the approval waited\n"
    assert (ws / "both.txt").read_text() == "both.txt: the user's version\n"
    assert (ws / "build" / "keep.me").exists()
    # and what only the run changed is applied
    assert (ws / "made.txt").read_text() == "run\n"
    assert not (ws / "gone.txt").exists()
    assert not (ws / "build" / "x.o").exists()


async def _pending(client: httpx.AsyncClient) -> dict[str, Any]:
    for _ in range(400):  # bounded: 20 s
        found = (await client.get("/api/approvals")).json()["approvals"]
        if found:
            return found[0]  # type: ignore[no-any-return]
        await asyncio.sleep(0.05)
    raise AssertionError("no approval appeared")


@pytest.mark.anyio
async def test_edits_made_during_a_server_run_and_its_approval_survive_the_run(
    make_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)
    _edit_during_the_run(monkeypatch, lambda: _user_during_the_run(ws))
    client, hub, engine = await make_client([call("shell", command=RUN), "Done."])
    body = {"messages": [{"role": "user", "content": "Tidy up the build"}]}
    reply = asyncio.create_task(client.post("/v1/chat/completions", json=body))
    approval = await _pending(client)
    assert approval["changes"] and "both.txt" in approval["changes"]
    assert "edited.txt" not in approval["changes"]  # the user's edit is not the run's change
    assert "created_by_user" not in approval["changes"]
    _user_while_asked(ws)
    answered = await client.post(f"/api/approvals/{approval['id']}", json={"approve": True})
    assert answered.json()["decision"] == "approved"
    assert (await reply).status_code == 200

    _assert_the_users_work_survived(ws)
    told = engine.calls[1][-1].content  # what the model read as the shell's result
    assert "conflict" in told and "both.txt" in told and "build/" in told, told
    (run,) = hub.runs.values()
    shown = [e for e in run.events if e["type"] == "tool_result"]
    assert shown and "both.txt" in str(shown[-1]) and "conflict" in str(shown[-1])


def _run(ws: Path, home: Path, approver: Any, command: str) -> ToolResult:
    executor = ToolExecutor(builtin_tools(), approver=approver)
    ctx = ToolContext(workspace=ws, home=home)
    try:
        return asyncio.run(executor.run(ToolCall("c1", "shell", {"command": command}), ctx))
    finally:
        executor.close()


def test_edits_made_while_the_approver_waits_survive_the_run(
    tmp_path: Path, lar_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)
    _edit_during_the_run(monkeypatch, lambda: _user_during_the_run(ws))
    shown: list[Changes | None] = []

    def approver(call: ToolCall, tool: Any, changes: Changes | None = None) -> bool:
        shown.append(changes)
        _user_while_asked(ws)  # the user works on while the question is open
        return True

    result = _run(ws, lar_home, approver, RUN)
    assert result.ok, result.content
    (changes,) = shown
    assert changes is not None
    assert "created_by_user.txt" not in changes.deleted and "edited.txt" not in changes.modified
    _assert_the_users_work_survived(ws)
    assert "conflict" in result.content and "both.txt" in result.content


def test_a_file_the_user_deleted_meanwhile_is_not_brought_back_by_the_run(
    tmp_path: Path, lar_home: Path
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)

    def approver(call: ToolCall, tool: Any, changes: Changes | None = None) -> bool:
        (ws / "both.txt").unlink()
        return True

    result = _run(ws, lar_home, approver, "echo run > both.txt; echo run > made.txt")
    assert result.ok, result.content
    assert not (ws / "both.txt").exists()
    assert (ws / "made.txt").read_text() == "run\n"
    assert "conflict" in result.content and "both.txt" in result.content


def test_the_same_change_made_by_the_user_and_the_run_is_no_conflict(
    tmp_path: Path, lar_home: Path
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)

    def approver(call: ToolCall, tool: Any, changes: Changes | None = None) -> bool:
        (ws / "both.txt").write_text("same\n")
        return True

    result = _run(ws, lar_home, approver, "echo same > both.txt")
    assert result.ok and "conflict" not in result.content, result.content
    assert (ws / "both.txt").read_text() == "same\n"
