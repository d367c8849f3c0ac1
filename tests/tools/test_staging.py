"""Preview before apply (issue 16, Build: reversible changes): under `confirm`, code and shell run
on a copy of the workspace; the user sees what would be created, modified and deleted, and only
a yes changes the real workspace."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_undo import PYTHON, SHELL, tree_digest, world  # noqa: F401 - world is a fixture
from typer.testing import CliRunner

from lar.cli.main import app
from lar.config import SandboxSettings
from lar.tools.base import ToolContext
from lar.tools.builtin import builtin_tools
from lar.tools.executor import ToolExecutor
from lar.tools.staging import Changes, Stage
from lar.types import ToolCall, ToolResult


def _tree(root: Path) -> None:
    (root / "build").mkdir(parents=True)
    (root / "build" / "x.o").write_bytes(b"\x00obj")
    (root / "build" / "y.o").write_bytes(b"\x01obj")
    (root / "a.txt").write_text("alpha\n")
    (root / "same.txt").write_text("unchanged\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "link").symlink_to("a.txt")
    (root / "becomes_dir").write_text("a file for now\n")


def test_diff_lists_each_kind_of_change_and_apply_reproduces_the_copy(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _tree(ws)
    home.mkdir()
    stage = Stage(ws, home, [])
    copy = stage.path
    shutil.rmtree(copy / "build")
    (copy / "a.txt").write_text("ALPHA\n")
    (copy / "run.sh").chmod(0o755)
    (copy / "link").unlink()
    (copy / "link").symlink_to("same.txt")
    (copy / "becomes_dir").unlink()
    (copy / "becomes_dir").mkdir()
    (copy / "becomes_dir" / "inner.txt").write_text("inside\n")
    (copy / "new").mkdir()
    (copy / "new" / "n.txt").write_text("new\n")
    before = tree_digest(ws)

    changes = stage.diff()

    assert tree_digest(ws) == before  # looking changes nothing
    assert set(changes.created) == {"new/", "new/n.txt", "becomes_dir/inner.txt", "becomes_dir/"}
    assert set(changes.deleted) == {"build/", "build/x.o", "build/y.o", "becomes_dir"}
    assert set(changes.modified) == {"a.txt", "run.sh", "link"}
    assert "same.txt" not in changes.created + changes.modified + changes.deleted
    summary = changes.summary()
    assert "deletes 4 (becomes_dir, build/)" in summary and "build/x.o" not in summary
    expected = tree_digest(copy)
    stage.apply(changes)
    assert tree_digest(ws) == expected
    stage.discard()
    assert not stage.folder.exists()


def test_nothing_changed_is_said_plainly(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _tree(ws)
    stage = Stage(ws, home, [])
    changes = stage.diff()
    assert changes.empty and changes.summary() == "changes no file in the workspace"
    stage.discard()


def test_lar_home_inside_the_workspace_is_never_copied_compared_or_touched(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws)
    home = ws / ".lar"
    home.mkdir()
    (home / "config.yaml").write_text("model: default\n")
    stage = Stage(ws, home, [])
    assert not (stage.path / ".lar" / "config.yaml").exists()
    (stage.path / ".lar").mkdir(exist_ok=True)  # bwrap makes a mount point there
    changes = stage.diff()
    assert not any(p.startswith(".lar") for p in changes.created + changes.deleted)
    stage.apply(changes)
    assert (home / "config.yaml").read_text() == "model: default\n"


def test_apply_does_not_write_through_a_folder_swapped_for_a_symlink(tmp_path: Path) -> None:
    ws, home, outside = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    _tree(ws)
    outside.mkdir()
    stage = Stage(ws, home, [])
    (stage.path / "build" / "z.o").write_text("new object\n")
    changes = stage.diff()
    shutil.rmtree(ws / "build")
    (ws / "build").symlink_to(outside)  # swapped while the user was being asked
    with pytest.raises(OSError, match="symlink"):
        stage.apply(changes)
    assert list(outside.iterdir()) == []


class Previewer:
    """An approver that previews: records what it was shown and what the workspace held then."""

    def __init__(self, answer: bool, ws: Path) -> None:
        self.answer, self.ws = answer, ws
        self.shown: list[Changes | None] = []
        self.seen: list[dict[str, str]] = []

    def __call__(self, call: ToolCall, tool: Any, changes: Changes | None = None) -> bool:
        self.shown.append(changes)
        self.seen.append(tree_digest(self.ws))
        return self.answer


def _run(ws: Path, home: Path, approver: Any, tool: str, source: str, **kw: Any) -> ToolResult:
    executor = ToolExecutor(builtin_tools(), approver=approver)
    args = {"command": source} if tool == "shell" else {"code": source}
    ctx = ToolContext(workspace=ws, home=home, **kw)
    try:
        return asyncio.run(executor.run(ToolCall("c1", tool, args), ctx))
    finally:
        executor.close()


def test_every_destructive_command_is_previewed_and_a_no_changes_nothing(
    world: dict[str, Path],  # noqa: F811 - the fixture imported above
) -> None:
    """The 50 commands of the undo test under `confirm`: each runs on a copy; the user is asked
    once, after the run, with its changes; at that moment and after a no, the workspace is as
    it was; a yes makes it exactly what the same command run directly makes it."""
    ws, home = world["ws"], world["lar_home"]
    pristine = ws.parent / "pristine"
    shutil.copytree(ws, pristine, symlinks=True)
    original = tree_digest(ws)
    previewed = 0
    for tool, source in [("shell", c) for c in SHELL] + [("code_run", c) for c in PYTHON]:
        no = Previewer(False, ws)
        declined = _run(ws, home, no, tool, source)
        assert tree_digest(ws) == original, f"a no changed the workspace: {source}"
        if "refused" in declined.content:
            continue
        assert len(no.shown) == 1 and no.shown[0] is not None, source
        assert no.seen == [original], f"changed before the user said yes: {source}"
        assert declined.error is not None and declined.error.code == "denied"
        assert "stdout" not in declined.content  # the output of an unapproved run is withheld
        previewed += 1

        direct = ws.parent / "direct"
        shutil.rmtree(direct, ignore_errors=True)
        shutil.copytree(pristine, direct, symlinks=True)
        _run(direct, home, lambda c, t: True, tool, source)
        yes = Previewer(True, ws)
        applied = _run(ws, home, yes, tool, source)
        assert applied.ok, (source, applied.content)
        assert tree_digest(ws) == tree_digest(direct), f"applied differs from direct: {source}"
        shown = yes.shown[0]
        assert shown is not None and shown.empty == (tree_digest(ws) == original), source
        if shown.empty:
            continue  # nothing applied, so no snapshot either
        out = CliRunner().invoke(app, ["undo", "--workspace", str(ws)], env={"LAR_HOME": str(home)})
        assert out.exit_code == 0 and tree_digest(ws) == original, (source, out.output)
        for snap in (home / "undo").glob("u_*"):  # the direct runs' snapshots
            shutil.rmtree(snap)
    assert previewed >= 40, f"only {previewed} of 50 were previewed"
    assert not list((home / "stage").iterdir()), "a staging copy was left behind"


def test_an_approver_without_previews_is_asked_before_the_run(world: dict[str, Path]) -> None:  # noqa: F811
    ws = world["ws"]
    seen: list[bool] = []

    def plain(call: ToolCall, tool: Any) -> bool:
        seen.append((ws / "made.txt").exists())
        return True

    result = _run(ws, world["lar_home"], plain, "shell", "echo x > made.txt")
    assert result.ok and seen == [False] and (ws / "made.txt").exists()


def test_with_network_on_the_user_is_asked_before_the_run(world: dict[str, Path]) -> None:  # noqa: F811
    """A run with network access may act outside the machine: no preview, the usual question."""
    ws = world["ws"]
    ask = Previewer(True, ws)
    online = SandboxSettings(network=True)
    result = _run(ws, world["lar_home"], ask, "shell", "echo x > made.txt", sandbox=online)
    assert result.ok and ask.shown == [None] and (ws / "made.txt").exists()


def test_chat_shows_what_a_run_would_change(
    world: dict[str, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from io import StringIO

    from rich.console import Console

    from lar.cli.chat import ChatSession

    out = StringIO()

    class FakeAgent:
        workspace = world["ws"]

    session = ChatSession(
        make_agent=lambda *a: FakeAgent(), model=None, console=Console(file=out, width=200)
    )
    answers = iter(["n"])
    monkeypatch.setattr("builtins.input", lambda prompt: (out.write(prompt), next(answers))[1])
    result = _run(world["ws"], world["lar_home"], session.approve, "shell", "rm -r sub")
    text = out.getvalue()
    assert "ran on a copy of the workspace" in text and "deletes 4 (sub/)" in text, text
    assert "Apply? [y/N]" in text
    assert not result.ok and (world["ws"] / "sub" / "b.txt").exists()
    assert os.environ.get("LAR_HOME") == str(world["lar_home"])


# A run that changes nothing needs no yes (issue 45, Build 2): under `confirm` a staging tool
# runs on a copy whoever approves, and only a run that would change something is asked about.


def test_without_an_approver_a_run_that_only_reads_answers_and_asks_no_one(
    world: dict[str, Path],  # noqa: F811
) -> None:
    ws = world["ws"]
    before = tree_digest(ws)
    result = _run(ws, world["lar_home"], None, "code_run", "len(open('a.txt').read())")
    assert result.ok and "6" in result.content, result.content
    assert tree_digest(ws) == before
    assert not list((world["lar_home"] / "stage").iterdir()), "a staging copy was left behind"
    assert not (world["lar_home"] / "undo").exists() or not list(
        (world["lar_home"] / "undo").iterdir()
    ), "a run that changed nothing took an undo snapshot"


def test_without_an_approver_a_run_that_writes_or_deletes_changes_nothing(
    world: dict[str, Path],  # noqa: F811
) -> None:
    ws = world["ws"]
    before = tree_digest(ws)
    for tool, source in [
        ("code_run", "open('made.txt', 'w').write('x'); print('SECRET-OUTPUT')"),
        ("code_run", "import os; os.remove('a.txt'); print('SECRET-OUTPUT')"),
        ("shell", "echo SECRET-OUTPUT; echo x >> sub/b.txt"),
    ]:
        result = _run(ws, world["lar_home"], None, tool, source)
        assert not result.ok and result.error is not None and result.error.code == "denied"
        assert "SECRET-OUTPUT" not in result.content  # an unapproved run's output is withheld
        assert tree_digest(ws) == before, source
    assert not list((world["lar_home"] / "stage").iterdir())


def test_an_approver_that_never_allows_is_not_consulted_about_a_run_that_only_reads(
    world: dict[str, Path],  # noqa: F811
) -> None:
    """`lar run` without --yes: its approver refuses everything and says so (never_allows)."""
    ws = world["ws"]
    asked: list[str] = []

    class Refuser:
        never_allows = True

        def __call__(self, call: ToolCall, tool: Any) -> bool:
            asked.append(call.arguments["command"])
            return False

    read = _run(ws, world["lar_home"], Refuser(), "shell", "wc -l a.txt")
    assert read.ok and "1 a.txt" in read.content and asked == []
    wrote = _run(ws, world["lar_home"], Refuser(), "shell", "echo x > made.txt")
    assert not wrote.ok and asked == ["echo x > made.txt"] and not (ws / "made.txt").exists()
    assert "did not allow" in wrote.content and "creates 1 (made.txt)" in wrote.content


def test_a_doubted_run_is_asked_about_even_when_it_changed_nothing(
    world: dict[str, Path],  # noqa: F811
) -> None:
    ask = Previewer(False, world["ws"])
    result = _run(world["ws"], world["lar_home"], ask, "shell", "rm -r nothing_here")
    assert not result.ok and len(ask.shown) == 1
    assert ask.shown[0] is not None and ask.shown[0].empty


def test_a_run_nobody_approved_cannot_read_the_users_home_or_reach_the_network(
    world: dict[str, Path],  # noqa: F811
) -> None:
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    reached: list[bool] = []

    def accept() -> None:
        server.settimeout(5)
        try:
            server.accept()
            reached.append(True)
        except OSError:
            pass

    waiter = threading.Thread(target=accept)
    waiter.start()
    try:
        source = (
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')\n"
            "except OSError as e:\n    print('no network:', e)\n"
            f"try:\n    print(open({str(world['home'] / 'notes.txt')!r}).read())\n"
            "except OSError as e:\n    print('no home:', e)\n"
        )
        result = _run(world["ws"], world["lar_home"], None, "code_run", source)
    finally:
        waiter.join()
        server.close()
    assert result.ok, result.content
    assert "no network" in result.content and "CONNECTED" not in result.content
    assert "the user's own file" not in result.content, result.content
    assert reached == []
