"""file_read, file_write, file_patch (B1). Relative paths resolve against the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from lar.tools.base import ToolContext, private_paths, tool

__all__ = ["file_read", "file_write", "file_patch"]

_MAX_LINES = 400


def _resolve(ctx: ToolContext, path: str) -> Path:
    """The path inside the workspace, symlinks followed; anything that leads out is refused."""
    p = Path(path).expanduser()
    root = ctx.workspace.resolve()
    target = (p if p.is_absolute() else root / p).resolve()
    if target != root and root not in target.parents:
        raise PermissionError(
            f"{path!r} is outside the workspace ({root}); file tools only work inside it"
        )
    for private in private_paths(ctx):
        if target == private or private in target.parents:
            raise PermissionError(
                f"{path!r} is in {private}, which holds Lar's own or denied files; "
                "tools cannot read or change it"
            )
    return target


@tool(broad=True)
def file_read(
    path: str,
    ctx: ToolContext,
    start_line: int = 1,
    end_line: int | None = None,
    keyword: str | None = None,
) -> str:
    """Read a text file (the whole file unless lines are given), with line numbers; use it for
    any question about a file's content.

    Args:
        path: File to read, relative to the workspace.
        start_line: First line to show (1-based).
        end_line: Last line to show; default: up to 400 lines.
        keyword: Show only lines containing this text, with 2 lines of context.
    """
    file = _resolve(ctx, path)
    if not file.is_file():
        raise FileNotFoundError(f"no file {path!r} in {ctx.workspace}")
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    if keyword:
        keep: set[int] = set()
        for i, line in enumerate(lines):
            if keyword.lower() in line.lower():
                keep.update(range(max(0, i - 2), min(len(lines), i + 3)))
        if not keep:
            return f"{path}: no line contains {keyword!r} ({len(lines)} lines)"
        shown = [f"{i + 1}: {lines[i]}" for i in sorted(keep)]
        return "\n".join(shown)
    start = max(1, start_line)
    end = min(len(lines), end_line if end_line is not None else start + _MAX_LINES - 1)
    out = [f"{i}: {lines[i - 1]}" for i in range(start, end + 1)]
    if end < len(lines) and end_line is None:
        out.append(f"[{len(lines) - end} more lines; read on with start_line={end + 1}]")
    return "\n".join(out) if out else f"{path}: empty or no lines in range ({len(lines)} lines)"


@tool(permission="confirm", broad=True)
def file_write(
    path: str,
    content: str,
    ctx: ToolContext,
    mode: Literal["create", "append", "overwrite"] = "create",
) -> str:
    """Write a text file.

    Args:
        path: File to write, relative to the workspace.
        content: Text to write.
        mode: create (fails if the file exists), append, or overwrite.
    """
    file = _resolve(ctx, path)
    if mode == "create" and file.exists():
        raise FileExistsError(f"{path} exists; use mode 'append' or 'overwrite'")
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("a" if mode == "append" else "w", encoding="utf-8") as f:
        f.write(content)
    return f"wrote {len(content)} characters to {path} ({mode})"


@tool(permission="confirm", broad=True)
def file_patch(path: str, old: str, new: str, ctx: ToolContext) -> str:
    """Replace one exact block of text in a file; the block must occur exactly once.

    Args:
        path: File to change, relative to the workspace.
        old: The exact text to replace.
        new: The replacement text.
    """
    file = _resolve(ctx, path)
    if not file.is_file():
        raise FileNotFoundError(f"no file {path!r} in {ctx.workspace}")
    text = file.read_text(encoding="utf-8")
    count = text.count(old) if old else 0
    if count != 1:
        raise ValueError(
            f"the block to replace occurs {count} times in {path}; it must occur exactly once "
            "(copy it exactly, with more surrounding lines if needed)"
        )
    file.write_text(text.replace(old, new, 1), encoding="utf-8")
    return f"patched {path}: replaced {len(old)} characters with {len(new)}"
