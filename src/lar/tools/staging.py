"""Preview before apply (B2): a run under ``confirm`` works on a copy of the workspace first.

The sandbox mounts the copy where the workspace is, so the program sees the same paths; when it
ends, ``Stage.diff`` lists what it created, modified and deleted, the user is asked once with
that summary, and only a yes makes ``Stage.apply`` carry those changes into the real workspace
(each file replaced atomically, a snapshot taken first for ``lar undo``). A no leaves the
workspace as it was. Lar's home and denied paths are neither copied, compared nor touched.

The user may go on working while the run goes and while they are asked: what the run changed is
measured against a manifest of the copy taken when it was made (kind, mode, size, modification
time and SHA-256 of each file), never against the workspace as it is at the end, so a file the
user created or edited meanwhile is not one the run deleted or modified. ``apply`` touches only
the paths the run changed, and only where the workspace still holds what the copy started from;
where the user changed, created or deleted such a path meanwhile, the user's version is kept and
the path is reported (``Stage.apply`` returns them, ``kept_notice`` says so in the result).

A staging tool gets ``ToolContext.stage`` and returns a ``Staged`` value, or raises
``CannotStage`` before anything ran (no namespace isolation to remap the workspace, network
access, a workspace too big to copy); the executor then asks before running, as without a preview.

A file of the copy whose size and modification time are unchanged is taken as unchanged without
reading it (a program that rewrites a file and restores its time has that change left out, never
applied).
"""

from __future__ import annotations

import errno
import hashlib
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

__all__ = ["Changes", "Stage", "Staged", "CannotStage", "kept_notice"]

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
            # What the run starts from: the base its changes, and the user's, are measured by.
            self._base = _entries(self.path, self._skip)
            self._hashes = {
                rel: _sha256(self.path / rel) for rel, e in self._base.items() if e[0] == "file"
            }
        except (OSError, subprocess.SubprocessError) as exc:
            self.discard()
            raise CannotStage(f"could not copy the workspace ({exc})") from exc

    def diff(self) -> Changes:
        """What the run changed in the copy since it was made (the workspace is not looked at)."""
        before, after = self._base, _entries(self.path, self._skip)
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
        base = self._hashes.get(rel)
        return base is None or base != _sha256(self.path / rel)

    def apply(self, changes: Changes) -> tuple[str, ...]:
        """Make each path the run changed what it is in the copy, where the workspace still
        holds what the copy started from; returns the paths left as the user made them
        meanwhile (changed, created or deleted there since the copy was made)."""
        kept: list[str] = []
        for rel in sorted(changes.deleted, key=_depth, reverse=True):
            if not self._remove(rel):
                kept.append(rel)
        for rel in sorted([*changes.created, *changes.modified], key=_depth):
            if not self._put(rel):
                kept.append(rel)
        return tuple(sorted(kept))

    def _base_state(self, rel: str) -> _State | None:
        entry = self._base.get(rel)
        if entry is None:
            return None
        if entry[0] == "file":
            return ("file", entry[1], entry[2], self._hashes.get(rel) or object())
        if entry[0] == "link":
            return ("link", entry[4])
        return (entry[0], entry[1])

    def _remove(self, rel: str) -> bool:
        """Delete ``rel`` from the workspace unless the user changed it meanwhile."""
        target = self._target(rel)
        now = _state(target)
        if now is None:
            return True  # gone already: the user deleted it too
        base = self._base_state(rel)
        if rel.endswith("/"):
            if now[0] != "dir":
                return False
            try:
                target.rmdir()
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    return False  # it holds what the user added, or kept, meanwhile
                raise
            return True
        if now != base:
            return False
        target.unlink()
        return True

    def _put(self, rel: str) -> bool:
        """Make ``rel`` in the workspace what it is in the copy unless the user changed it
        meanwhile (or removed the folder it goes in)."""
        source, target = self.path / rel.rstrip("/"), self._target(rel)
        new, now, base = _state(source), _state(target), self._base_state(rel)
        if new is None:  # pragma: no cover - diff listed it, and nothing else writes the copy
            return True
        if now == new:
            return True  # the user made the same change
        if new[0] == "dir":
            if now is not None and now[0] == "dir":
                if base is None:
                    return True  # both made this folder: what goes in it is merged
                if now != base:
                    return False
                os.chmod(target, new[1])
                return True
            if now is not None or base is not None or not _is_folder(target.parent):
                return False
            target.mkdir()
            shutil.copystat(source, target, follow_symlinks=False)
            return True
        if now != base or not _is_folder(target.parent):
            return False
        temp = target.with_name(f".{target.name}.lar-{secrets.token_hex(4)}")
        if new[0] == "link":
            os.symlink(os.readlink(source), temp)
        else:
            shutil.copy2(source, temp, follow_symlinks=False)
        os.replace(temp, target)
        return True

    def _target(self, rel: str) -> Path:
        """The workspace path for ``rel``, refusing one reached through a symlink."""
        target = self.workspace / rel.rstrip("/")
        for parent in target.relative_to(self.workspace).parents:
            if parent != Path(".") and (self.workspace / parent).is_symlink():
                raise OSError(f"{self.workspace / parent} became a symlink; not writing through it")
        return target

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def kept_notice(kept: tuple[str, ...], limit: int = 8) -> str:
    """For the tool's result: the paths left as the user changed them while the run went."""
    if not kept:
        return ""
    tops = _tops(kept)
    more = f", … {len(tops) - limit} more" if len(tops) > limit else ""
    return (
        f"\n(conflict: {len(kept)} path(s) this run changed were also changed in the workspace "
        f"while it ran or waited; the user's version was kept, the run's not applied: "
        f"{', '.join(tops[:limit])}{more})"
    )


_State = tuple[Any, ...]
"""``("file", mode, size, sha256)``, ``("dir", mode)``, ``("link", target)`` or
``("other", mode)``."""


def _state(path: Path) -> _State | None:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(st.st_mode):
        return ("dir", stat.S_IMODE(st.st_mode))
    if stat.S_ISREG(st.st_mode):
        return ("file", stat.S_IMODE(st.st_mode), st.st_size, _sha256(path) or object())
    return ("other", stat.S_IMODE(st.st_mode))


def _sha256(path: Path) -> str | None:
    """The file's digest; None where it cannot be read (its state then gets an ``object()``,
    equal to nothing)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


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
