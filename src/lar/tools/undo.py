"""Undo for code and shell runs (B2): a snapshot of the workspace before each run.

A list of dangerous patterns cannot be the boundary (``rm`` has endless spellings), so every
``code_run`` and ``shell`` call first copies the workspace to ``$LAR_HOME/undo/ID/`` (reflinks
where the filesystem has them, so the copy costs little), and ``lar undo`` puts it back byte for
byte: files and folders made since are removed, changed and deleted ones restored, modes and
symlinks kept. Lar's own home and denied paths are neither copied nor touched. A workspace over
``MAX_BYTES`` gets no snapshot; the tool's result says so.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "Snapshot",
    "take",
    "snapshots",
    "restore",
    "tree_size",
    "copy_tree",
    "MAX_BYTES",
    "KEEP",
    "NoSnapshot",
]

MAX_BYTES = 256 * 1024 * 1024
KEEP = 20
"""Snapshots kept per Lar home (the oldest go first)."""


class NoSnapshot(Exception):
    """Why a snapshot could not be taken (too big, unreadable); the run goes on without one."""


@dataclass(slots=True)
class Snapshot:
    id: str
    workspace: str
    created: float
    what: str

    def tree(self, home: Path) -> Path:
        return home / "undo" / self.id / "tree"


def _excluded(path: Path, exclude: list[Path]) -> bool:
    return any(path == e or e in path.parents for e in exclude)


def tree_size(root: Path, exclude: list[Path]) -> int:
    total = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = [d for d in dirs if not _excluded(here / d, exclude)]
        for name in files:
            try:
                total += (here / name).lstat().st_size
            except OSError:
                continue
            if total > MAX_BYTES:
                return total
    return total


def copy_tree(src: Path, dst: Path, exclude: list[Path]) -> None:
    """``cp -a`` with reflinks where possible; Python's copytree where ``cp`` is missing."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copystat(src, dst, follow_symlinks=False)
    for entry in os.scandir(src):
        path = Path(entry.path)
        if _excluded(path, exclude):
            continue
        target = dst / entry.name
        if target.is_dir() and not target.is_symlink() and entry.is_dir(follow_symlinks=False):
            copy_tree(path, target, exclude)  # kept: it holds an excluded path; merge into it
            continue
        cp = shutil.which("cp")
        if cp is not None:
            done = subprocess.run(
                [cp, "-a", "--reflink=auto", "--", str(path), str(target)],
                capture_output=True,
                timeout=600,
            )
            if done.returncode == 0:
                continue
        if entry.is_dir(follow_symlinks=False):
            shutil.copytree(path, target, symlinks=True, copy_function=shutil.copy2)
        else:
            shutil.copy2(path, target, follow_symlinks=False)


def take(workspace: Path, home: Path, what: str, exclude: list[Path]) -> Snapshot:
    """Copy ``workspace`` (without ``exclude``) before a run; ``NoSnapshot`` says why not."""
    workspace = workspace.resolve()
    exclude = [e.resolve() for e in [*exclude, home]]
    size = tree_size(workspace, exclude)
    if size > MAX_BYTES:
        raise NoSnapshot(f"the workspace is over {MAX_BYTES // 2**20} MB")
    snap = Snapshot("u_" + secrets.token_hex(6), str(workspace), time.time(), what[:200])
    folder = home / "undo" / snap.id
    folder.mkdir(mode=0o700, parents=True)
    try:
        copy_tree(workspace, snap.tree(home), exclude)
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise NoSnapshot(f"could not copy the workspace ({exc})") from exc
    (folder / "snapshot.json").write_text(json.dumps(asdict(snap)))
    for old in snapshots(home)[KEEP:]:
        shutil.rmtree(home / "undo" / old.id, ignore_errors=True)
    return snap


def snapshots(home: Path, workspace: Path | None = None) -> list[Snapshot]:
    """Newest first; only those of ``workspace`` when given."""
    found: list[Snapshot] = []
    for meta in (home / "undo").glob("u_*/snapshot.json"):
        try:
            snap = Snapshot(**json.loads(meta.read_text()))
        except (OSError, ValueError, TypeError):
            continue  # a half-written or foreign entry: not something to restore from
        if workspace is None or Path(snap.workspace) == workspace.resolve():
            found.append(snap)
    return sorted(found, key=lambda s: s.created, reverse=True)


def restore(snap: Snapshot, home: Path, exclude: list[Path]) -> tuple[int, int]:
    """Put the workspace back as the snapshot holds it; (entries restored, entries removed).

    The snapshot is used up: it is removed afterwards (undo the run before it next).
    """
    workspace = Path(snap.workspace)
    tree = snap.tree(home)
    exclude = [e.resolve() for e in [*exclude, home]]
    removed = _clear(workspace, exclude)
    copy_tree(tree, workspace, [])
    restored = sum(1 for _ in tree.iterdir())
    shutil.rmtree(home / "undo" / snap.id, ignore_errors=True)
    return restored, removed


def _clear(folder: Path, exclude: list[Path]) -> int:
    """Remove everything in ``folder`` but the excluded paths (and the folders holding them)."""
    removed = 0
    for entry in list(os.scandir(folder)):
        path = Path(entry.path)
        if _excluded(path, exclude):
            continue
        if entry.is_dir(follow_symlinks=False):
            if any(path in e.parents for e in exclude):
                removed += _clear(path, exclude)
                continue
            shutil.rmtree(path)
        else:
            path.unlink()
        removed += 1
    return removed
