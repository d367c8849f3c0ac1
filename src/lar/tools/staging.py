"""Preview before apply (B2): a run under ``confirm`` works on a copy of the workspace first.

The sandbox mounts the copy where the workspace is, so the program sees the same paths; when it
ends, ``Stage.diff`` lists what it created, modified and deleted, the user is asked once with
that summary, and only a yes makes ``Stage.apply`` carry those changes into the real workspace
(each file replaced atomically, a snapshot taken first for ``lar undo``). A no leaves the
workspace as it was. Lar's home and denied paths are neither copied, compared nor touched.

A staging tool gets ``ToolContext.stage`` and returns a ``Staged`` value, or raises
``CannotStage`` before anything ran (no namespace isolation to remap the workspace, network
access, a workspace too big to copy); the executor then asks before running, as without a preview.

Files compare by kind, mode and bytes; a file whose size and modification time are unchanged is
taken as unchanged without reading it (a program that rewrites a file and restores its time has
that change left out, never applied).
"""

from __future__ import annotations

import filecmp
import os
import secrets
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lar.tools import undo

__all__ = ["Changes", "Stage", "Staged", "CannotStage"]

_STALE_S = 24 * 3600


class CannotStage(Exception):
    """Why this call cannot run in a copy first (raised before anything ran)."""


@dataclass(frozen=True, slots=True)
class Changes:
    """Paths relative to the workspace; folders end with ``/``."""

    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.created or self.modified or self.deleted)

    def summary(self, limit: int = 8) -> str:
        """One line: ``creates 2 (a.txt, out/), deletes 14 (build/ …)``; nested entries of a
        created or deleted folder are counted but only the folder is named."""
        if self.empty:
            return "changes no file in the workspace"
        parts = []
        for verb, paths in (
            ("creates", self.created),
            ("modifies", self.modified),
            ("deletes", self.deleted),
        ):
            if not paths:
                continue
            tops = _tops(paths)
            more = f", … {len(tops) - limit} more" if len(tops) > limit else ""
            shown = ", ".join(tops[:limit]) + more
            parts.append(f"{verb} {len(paths)} ({shown})")
        return "; ".join(parts)


def _tops(paths: tuple[str, ...]) -> list[str]:
    """The entries not inside another listed folder."""
    folders = [p for p in paths if p.endswith("/")]
    return [p for p in paths if not any(p != f and p.startswith(f) for f in folders)]


@dataclass(slots=True)
class Staged:
    """What a staging tool returns: its result, what it would change, and the two ways on."""

    value: Any
    changes: Changes
    apply: Callable[[], Any]
    """Carry the changes into the workspace; returns the tool's final result."""
    discard: Callable[[], None]


_Entry = tuple[str, int, int, int, str]  # kind, mode, size, mtime_ns, link target


def _entries(root: Path, skip: set[str]) -> dict[str, _Entry]:
    found: dict[str, _Entry] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rel_here = here.relative_to(root).as_posix()
        prefix = "" if rel_here == "." else rel_here + "/"
        kept = []
        for name in dirs:
            rel = prefix + name
            if rel in skip:
                continue
            st = (here / name).lstat()
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, 0, 0, os.readlink(here / name))
                continue
            found[rel + "/"] = ("dir", stat.S_IMODE(st.st_mode), 0, 0, "")
            kept.append(name)
        dirs[:] = kept
        for name in files:
            rel = prefix + name
            if rel in skip:
                continue
            st = (here / name).lstat()
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, 0, 0, os.readlink(here / name))
            elif stat.S_ISREG(st.st_mode):
                found[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns, "")
            else:
                found[rel] = ("other", stat.S_IMODE(st.st_mode), 0, 0, "")
    return found


class Stage:
    """A private copy of ``workspace`` under ``$LAR_HOME/stage/``."""

    def __init__(self, workspace: Path, home: Path, exclude: list[Path]) -> None:
        self.workspace = workspace.resolve()
        self.exclude = [e.resolve() for e in [*exclude, home]]
        self._skip = {
            e.relative_to(self.workspace).as_posix()
            for e in self.exclude
            if e != self.workspace and self.workspace in e.parents
        }
        root = home / "stage"
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        _sweep(root)
        self.folder = root / ("s_" + secrets.token_hex(6))
        self.path = self.folder / "tree"
        if undo.tree_size(self.workspace, self.exclude) > undo.MAX_BYTES:
            raise CannotStage(f"the workspace is over {undo.MAX_BYTES // 2**20} MB")
        self.folder.mkdir(mode=0o700)
        try:
            undo.copy_tree(self.workspace, self.path, self.exclude)
        except (OSError, subprocess.SubprocessError) as exc:
            self.discard()
            raise CannotStage(f"could not copy the workspace ({exc})") from exc

    def diff(self) -> Changes:
        before = _entries(self.workspace, self._skip)
        after = _entries(self.path, self._skip)
        created = sorted(set(after) - set(before))
        deleted = sorted(set(before) - set(after))
        modified = sorted(
            rel for rel in set(before) & set(after) if self._differs(rel, before[rel], after[rel])
        )
        return Changes(tuple(created), tuple(modified), tuple(deleted))

    def _differs(self, rel: str, old: _Entry, new: _Entry) -> bool:
        if old[0] != new[0] or old[1] != new[1]:
            return True
        if old[0] == "link":
            return old[4] != new[4]
        if old[0] != "file":
            return False
        if old[2] != new[2]:
            return True
        if old[3] == new[3]:
            return False
        return not filecmp.cmp(self.workspace / rel, self.path / rel, shallow=False)

    def apply(self, changes: Changes) -> None:
        """Make each changed path of the workspace what it is in the copy."""
        replaced = [p for p in changes.modified if self._kind_changed(p)]
        for rel in sorted([*changes.deleted, *replaced], key=_depth, reverse=True):
            target = self._target(rel)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
        for rel in sorted([*changes.created, *changes.modified], key=_depth):
            self._put(rel)

    def _kind_changed(self, rel: str) -> bool:
        old, new = self._target(rel), self.path / rel.rstrip("/")
        return _kind(old) != _kind(new)

    def _target(self, rel: str) -> Path:
        """The workspace path for ``rel``, refusing one reached through a symlink."""
        target = self.workspace / rel.rstrip("/")
        for parent in target.relative_to(self.workspace).parents:
            if parent != Path(".") and (self.workspace / parent).is_symlink():
                raise OSError(f"{self.workspace / parent} became a symlink; not writing through it")
        return target

    def _put(self, rel: str) -> None:
        source, target = self.path / rel.rstrip("/"), self._target(rel)
        st = source.lstat()
        if stat.S_ISDIR(st.st_mode):
            if target.is_dir() and not target.is_symlink():
                os.chmod(target, stat.S_IMODE(st.st_mode))
            else:
                target.mkdir()
                shutil.copystat(source, target, follow_symlinks=False)
            return
        temp = target.with_name(f".{target.name}.lar-{secrets.token_hex(4)}")
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(source), temp)
        else:
            shutil.copy2(source, temp, follow_symlinks=False)
        os.replace(temp, target)

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _kind(path: Path) -> str:
    if path.is_symlink():
        return "link"
    if path.is_dir():
        return "dir"
    return "file" if path.exists() else "none"


def _depth(rel: str) -> int:
    return rel.rstrip("/").count("/")


def _sweep(root: Path) -> None:
    """Copies left by a Lar process killed mid-run (a day old: no run lasts that long)."""
    now = time.time()
    for old in root.glob("s_*"):
        try:
            if now - old.stat().st_mtime > _STALE_S:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue
