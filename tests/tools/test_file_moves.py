"""file_move and file_delete: inside the workspace only, nothing overwritten, a deleted file
kept in Lar's trash; both ask first (confirm), are in the default set and are never listed:
they run when the model calls them by name (``held_back``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lar.tools import optional_tools
from lar.tools.base import ToolContext
from lar.tools.builtin.files import file_delete, file_move


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(workspace=ws, home=tmp_path / "home", call_id="call_1")


def test_a_file_is_renamed_and_moved_into_a_folder(ctx: ToolContext) -> None:
    ws = ctx.workspace
    (ws / "a.txt").write_text("alpha")
    (ws / "done").mkdir()
    assert file_move.fn("a.txt", "b.txt", ctx) == "moved a.txt to b.txt"
    assert (ws / "b.txt").read_text() == "alpha" and not (ws / "a.txt").exists()
    assert file_move.fn("b.txt", "done", ctx) == "moved b.txt to done/b.txt"
    assert (ws / "done" / "b.txt").read_text() == "alpha"
    assert file_move.fn("done/b.txt", "new/deep/c.txt", ctx) == "moved done/b.txt to new/deep/c.txt"
    assert (ws / "new" / "deep" / "c.txt").read_text() == "alpha"


def test_a_move_never_overwrites(ctx: ToolContext) -> None:
    ws = ctx.workspace
    (ws / "a.txt").write_text("alpha")
    (ws / "b.txt").write_text("beta")
    with pytest.raises(FileExistsError, match="b.txt exists; nothing was moved"):
        file_move.fn("a.txt", "b.txt", ctx)
    assert (ws / "a.txt").read_text() == "alpha" and (ws / "b.txt").read_text() == "beta"


def test_a_move_stays_inside_the_workspace(ctx: ToolContext, tmp_path: Path) -> None:
    ws = ctx.workspace
    (ws / "a.txt").write_text("alpha")
    (tmp_path / "outside").mkdir()
    (ws / "link").symlink_to(tmp_path / "outside")
    for destination in ("../a.txt", str(tmp_path / "outside" / "a.txt"), "link/a.txt"):
        with pytest.raises(PermissionError, match="outside the workspace"):
            file_move.fn("a.txt", destination, ctx)
    (tmp_path / "secret.txt").write_text("s")
    with pytest.raises(PermissionError, match="outside the workspace"):
        file_move.fn("../secret.txt", "got.txt", ctx)
    assert (ws / "a.txt").exists() and (tmp_path / "secret.txt").exists()
    assert list((tmp_path / "outside").iterdir()) == []


def test_a_folder_cannot_go_into_itself_and_a_missing_source_is_named(ctx: ToolContext) -> None:
    (ctx.workspace / "f").mkdir()
    with pytest.raises(ValueError, match="cannot go into itself"):
        file_move.fn("f", "f/g", ctx)
    with pytest.raises(FileNotFoundError, match="no file or folder 'nope.txt'"):
        file_move.fn("nope.txt", "x.txt", ctx)


def test_a_deleted_file_is_kept_in_the_trash(ctx: ToolContext) -> None:
    ws = ctx.workspace
    (ws / "notes").mkdir()
    (ws / "notes" / "old.txt").write_text("keep me somewhere")
    said = file_delete.fn("notes/old.txt", ctx)
    assert not (ws / "notes" / "old.txt").exists()
    assert ctx.home is not None
    [kept] = list((ctx.home / "trash").rglob("old.txt"))
    assert kept.read_text() == "keep me somewhere"
    assert kept.parent.name == "notes"  # its place in the workspace kept under the trash
    assert said.startswith("deleted notes/old.txt (kept in ") and str(kept) in said


def test_delete_refuses_folders_the_outside_and_lars_home(ctx: ToolContext, tmp_path: Path) -> None:
    ws = ctx.workspace
    (ws / "f").mkdir()
    (ws / "f" / "x.txt").write_text("x")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        file_delete.fn("f", ctx)
    (tmp_path / "outside.txt").write_text("o")
    with pytest.raises(PermissionError, match="outside the workspace"):
        file_delete.fn("../outside.txt", ctx)
    with pytest.raises(FileNotFoundError, match="no file 'gone.txt'"):
        file_delete.fn("gone.txt", ctx)
    inner_home = ToolContext(workspace=ws, home=ws / "f")  # a home inside the workspace
    with pytest.raises(PermissionError, match="Lar's own"):
        file_delete.fn("f/x.txt", inner_home)
    assert (ws / "f" / "x.txt").exists() and (tmp_path / "outside.txt").exists()


def test_deleting_a_link_deletes_the_link_not_what_it_points_to(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "target.txt").write_text("t")
    (ctx.workspace / "link.txt").symlink_to(tmp_path / "target.txt")
    file_delete.fn("link.txt", ctx)
    assert not (ctx.workspace / "link.txt").is_symlink()
    assert (tmp_path / "target.txt").read_text() == "t"


def test_both_ask_first_and_are_in_the_default_set_but_never_listed() -> None:
    from lar.tools import builtin_tools
    from lar.tools.executor import offered_for

    assert file_move.permission == "confirm" and file_delete.permission == "confirm"
    default = builtin_tools()
    assert {"file_move", "file_delete"} <= {t.name for t in default}
    for request in ("Supprime rapport.txt.", "Renomme taches.md en courses.txt.", "Hello"):
        assert not {file_move, file_delete} & set(offered_for(default, request))
    assert optional_tools(["file_move", "file_delete"]) == []  # already in the default set


def test_a_move_into_a_place_code_runs_from_needs_a_yes(ctx: ToolContext) -> None:
    verdict = file_move.danger({"source": "a.sh", "destination": ".git/hooks/pre-commit"}, ctx)  # type: ignore[misc]
    assert verdict.level == "confirm"
