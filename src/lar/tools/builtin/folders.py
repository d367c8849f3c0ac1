"""folder_list and file_find: what is where, how big and how recent (B1).

Read-only, so they run without asking inside the workspace; outside it they ask first (like
file_read), and Lar's own files and the home folder's hidden ones are never shown.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lar.tools.base import ToolContext, private_paths, tool
from lar.tools.builtin.files import (
    bytes_text,
    not_a_web_address,
    read_outside_danger,
    resolve_path,
    size_text,
    word_count,
)

__all__ = ["folder_list", "file_find"]

_MAX_WALK = 20_000  # entries looked at by one file_find
_MAX_COUNT_BYTES = 4 * 1024 * 1024  # files larger than this are not read to count lines
_LISTED = 30  # files file_find lists (its totals count all)
_SKIPPED = frozenset({".git", "__pycache__", "node_modules", ".venv", ".mypy_cache"})


@dataclass(slots=True)
class _Entry:
    path: Path
    shown: str
    folder: bool
    size: int
    modified: float


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _folder(ctx: ToolContext, path: str) -> Path:
    not_a_web_address(path)
    target = resolve_path(ctx, path, outside=True)
    if not target.exists():
        where = f" (the workspace is {ctx.workspace})" if not Path(path).is_absolute() else ""
        raise FileNotFoundError(f"no folder {path!r}{where}")
    if not target.is_dir():
        raise NotADirectoryError(f"{path!r} is a file, not a folder (file_read reads it)")
    return target


def _a_file(ctx: ToolContext, path: str, pattern: str = "") -> str | None:
    """For a folder tool given a file: its size, lines and date, then the file as file_read
    shows it (a small model's slip costs no turn), else None. The size comes first because a
    folder tool is what a model reaches for when asked how big one file is."""
    from lar.tools.builtin.files import file_read

    not_a_web_address(path)
    try:
        target = resolve_path(ctx, path, outside=True)
        if not target.is_file():
            return None
        info = target.stat()
    except (OSError, PermissionError):
        return None
    n = _lines(target, info.st_size)
    lines = f", {n} line{'' if n == 1 else 's'}" if n is not None else ""
    about = f"{size_text(info.st_size)}{lines}, changed {_when(info.st_mtime)}"
    # A pattern that is not the file's name, searched for in one file, is a word to look for.
    word = pattern.strip().strip("*")
    if word and not fnmatch.fnmatch(target.name.lower(), pattern.strip().lower()):
        found = str(file_read(path, ctx, keyword=word))
        return f"[{path} is a file, not a folder: {about}; lines with {word!r}:]\n{found}"
    return f"[{path} is a file, not a folder: {about}; its content:]\n" + str(file_read(path, ctx))


def _entries(folder: Path, shown_from: Path, private: list[Path]) -> Iterator[_Entry]:
    try:
        children = sorted(os.scandir(folder), key=lambda e: e.name)
    except PermissionError:
        raise PermissionError(f"{folder} cannot be listed (no permission)") from None
    for child in children:
        path = Path(child.path)
        if any(path == p or p in path.parents for p in private):
            continue
        try:
            info = child.stat(follow_symlinks=False)
        except OSError:
            continue
        folder_kind = stat.S_ISDIR(info.st_mode)
        shown = os.path.relpath(path, shown_from)
        yield _Entry(path, shown, folder_kind, 0 if folder_kind else info.st_size, info.st_mtime)


def _shown_from(ctx: ToolContext, target: Path) -> Path:
    root = ctx.workspace.resolve()
    return root if target == root or root in target.parents else target


def _lines(path: Path, size: int) -> int | None:
    """Lines in a text file, or None for a binary or very large one."""
    if size > _MAX_COUNT_BYTES:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@tool(broad=True, reads_outside=True, read_only=True, danger=read_outside_danger)
def folder_list(ctx: ToolContext, path: str = ".") -> str:
    """List a folder: its files (size, date) and subfolders.

    Args:
        path: Folder to list, relative to the workspace (default: the workspace itself).
    """
    if (content := _a_file(ctx, path)) is not None:
        return content
    target = _folder(ctx, path)
    everything = list(_entries(target, _shown_from(ctx, target), private_paths(ctx)))
    hidden = [e for e in everything if e.path.name.startswith(".")]
    found = [e for e in everything if not e.path.name.startswith(".")]
    if not found:
        return f"{path}: empty folder" + (f" ({len(hidden)} hidden names)" if hidden else "")
    folders = [e for e in found if e.folder]
    files = [e for e in found if not e.folder]
    lines = [f"{e.shown}/  (folder)" for e in folders]
    groups = _by_kind(files)
    pad = "  " if len(groups) > 1 else ""
    for label, members in groups:
        if pad:
            lines.append(f"{label}: {len(members)}")
        lines += [f"{pad}{e.shown}  {size_text(e.size)}  {_when(e.modified)}" for e in members]
    total = sum(e.size for e in files)
    more = f", {len(hidden)} hidden names not shown" if hidden else ""
    lines.append(f"[{len(files)} files in all, {bytes_text(total)}; {len(folders)} folders{more}]")
    if folders:
        lines.append(_with_subfolders(ctx, target))
    return "\n".join(lines)


def _with_subfolders(ctx: ToolContext, target: Path) -> str:
    """The folder's files with its subfolders': counts and bytes per kind and the largest file.
    A question says "including subfolders" of a folder the model has listed; from the top
    level alone its count, total or largest file is wrong (measured on generated draws)."""
    every, cut = _walk(ctx, target, _shown_from(ctx, target), "*")
    if not every:
        return "[subfolders included: no files]"
    kinds = "; ".join(
        f"{label}: {len(members)}, {bytes_text(sum(e.size for e in members))}"
        for label, members in _by_kind(every)
    )
    largest = max(every, key=lambda e: (e.size, e.shown))
    return (
        f"[subfolders included: {len(every)} files, {bytes_text(sum(e.size for e in every))} — "
        f"{kinds}; largest: {largest.shown}, {bytes_text(largest.size)}"
        + ("; search cut short" if cut else "")
        + "]"
    )


# What people call a file by its extension: a question says "text files" or "Python files",
# the listing says ".txt" and ".py", and a 1.5B model does not always join the two.
_KIND_NAMES = {
    ".txt": "text",
    ".md": "Markdown",
    ".py": "Python",
    ".js": "JavaScript",
    ".ts": "TypeScript",
    ".json": "JSON",
    ".csv": "CSV",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".html": "HTML",
    ".htm": "HTML",
    ".css": "CSS",
    ".sh": "shell",
    ".pdf": "PDF",
    ".log": "log",
    ".jpg": "image",
    ".jpeg": "image",
    ".png": "image",
    ".gif": "image",
    ".svg": "image",
    ".webp": "image",
    ".mp3": "audio",
    ".wav": "audio",
    ".mp4": "video",
    ".mov": "video",
    ".doc": "Word",
    ".docx": "Word",
    ".xls": "spreadsheet",
    ".xlsx": "spreadsheet",
    ".zip": "archive",
    ".gz": "archive",
    ".tar": "archive",
}


def _by_kind(files: list[_Entry]) -> list[tuple[str, list[_Entry]]]:
    """Files grouped by kind, largest group first: ("text files (.txt)", [...]), or one group
    when all are of one kind. A listing that says "text files (.txt): 3" above the files
    answers "how many text files" and "which text files" where a 1.5B model looks; from one
    total line ("5 files (…; 4 .md, 1 .txt)") it answered 5 to "how many markdown files"."""
    groups: dict[str, list[_Entry]] = {}
    exts: dict[str, set[str]] = {}
    for e in files:
        ext = e.path.suffix.lower()
        kind = _KIND_NAMES.get(ext, ext) if ext else ""
        groups.setdefault(kind, []).append(e)
        exts.setdefault(kind, set()).add(ext)

    def label(kind: str) -> str:
        if not kind:
            return "files with no extension"
        if kind.startswith("."):
            return f"{kind} files"
        return f"{kind} files ({', '.join(sorted(exts[kind]))})"

    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [(label(kind), members) for kind, members in ordered]


def _walk(ctx: ToolContext, top: Path, base: Path, pattern: str) -> tuple[list[_Entry], bool]:
    """Files under ``top`` whose name (or path) matches ``pattern``; True when the walk was cut.
    Names starting with a dot are looked at only when the pattern does."""
    matched: list[_Entry] = []
    stack, seen, private = [top], 0, private_paths(ctx)
    pattern = pattern.strip() or "*"
    hidden = pattern.startswith(".") or "/." in pattern
    by_path = "/" in pattern
    while stack:
        folder = stack.pop()
        try:
            children = list(_entries(folder, base, private))
        except PermissionError:
            continue
        for entry in children:
            seen += 1
            if seen > _MAX_WALK:
                return matched, True
            name = entry.path.name
            if not hidden and name.startswith("."):
                continue
            if entry.folder:
                if name not in _SKIPPED:
                    stack.append(entry.path)
                continue
            subject = entry.shown if by_path else name
            if fnmatch.fnmatch(subject.casefold(), pattern.casefold()):
                matched.append(entry)
    return matched, False


@tool(broad=True, reads_outside=True, read_only=True, danger=read_outside_danger)
def file_find(
    ctx: ToolContext,
    pattern: str = "*",
    path: str = ".",
    sort: Literal["name", "size", "newest"] = "name",
) -> str:
    """Find files by name in a folder and its subfolders: sizes, dates, line counts, totals.

    Use it to count files or lines, or to find the largest or newest file.

    Args:
        pattern: File name or glob, e.g. "*.py", "report*", "notes.txt" (default: every file).
        path: Folder to search, relative to the workspace (default: the workspace).
        sort: name, size (largest first) or newest (most recently changed first).
    """
    if (content := _a_file(ctx, path, pattern)) is not None:
        return content
    top = _folder(ctx, path)
    matched, cut = _walk(ctx, top, _shown_from(ctx, top), pattern)
    asked = pattern
    if not matched and re.fullmatch(r"\.\w{1,8}", pattern.strip()):
        # ".pdf" meant as the files ending so (a file named ".pdf" alone is rare)
        pattern = "*" + pattern.strip()
        matched, cut = _walk(ctx, top, _shown_from(ctx, top), pattern)
    if not matched:
        said = repr(asked) + (f" or {pattern!r}" if pattern != asked else "")
        return f"no file matches {said} under {path}" + (" (search cut short)" if cut else "")
    if sort == "size":
        matched.sort(key=lambda e: (-e.size, e.shown))
    elif sort == "newest":
        matched.sort(key=lambda e: (-e.modified, e.shown))
    else:
        matched.sort(key=lambda e: e.shown)
    counts = {e.path: _lines(e.path, e.size) for e in matched}
    shown = matched[:_LISTED]
    out = []
    for e in shown:
        n = counts[e.path]
        lines = f"  {n} lines" if n is not None else ""
        if n is not None and len(matched) == 1:  # one file asked about: its words too
            words = word_count(e.path.read_text(encoding="utf-8", errors="replace"))
            lines += f"  {words} words" if words is not None else ""
        out.append(f"{e.shown}  {size_text(e.size)}{lines}  {_when(e.modified)}")
    if len(matched) > len(shown):
        out.append(f"[{len(matched) - len(shown)} more not listed]")
    total_lines = sum(n for n in counts.values() if n is not None)
    total = sum(e.size for e in matched)
    out.append(
        f"[total: {len(matched)} files matching {pattern!r}, {bytes_text(total)}, "
        f"{total_lines} lines" + ("; search cut short" if cut else "") + "]"
    )
    return "\n".join(out)
