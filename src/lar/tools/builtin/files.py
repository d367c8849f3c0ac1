"""file_read, file_write, file_patch, file_move, file_delete (B1). Relative paths resolve against
the workspace."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import stat
import struct
import time
from pathlib import Path
from typing import Literal

from lar.tools.base import ToolContext, held_back, private_paths, tool
from lar.tools.danger import Verdict, runs_code_later

__all__ = [
    "file_read",
    "file_write",
    "file_patch",
    "file_move",
    "file_delete",
    "read_outside_danger",
    "resolve_path",
    "not_a_web_address",
    "read_text",
]

_MAX_LINES = 400


def not_a_web_address(path: str) -> None:
    """A file tool given a URL says which tool fetches it (the 1.5B mixes them up)."""
    if path.strip().lower().startswith(("http://", "https://", "www.")):
        raise ValueError(f"{path!r} is a web address, not a file or folder; web_scan fetches it")


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


def _target(ctx: ToolContext, path: str) -> Path:
    """The absolute path; spaces around the name are a model's slip (``" photos"``) and are
    dropped, unless a name with them exists."""

    def absolute(given: str) -> Path:
        p = Path(given).expanduser()
        return p if p.is_absolute() else ctx.workspace.resolve() / p

    exact = absolute(path)
    if path != path.strip() and not os.path.lexists(exact):
        exact = absolute(path.strip())
    return exact.resolve()


def resolve_path(ctx: ToolContext, path: str, *, outside: bool = False) -> Path:
    """The path, symlinks followed: inside the workspace, or anywhere when ``outside`` and the
    user allowed this call (a read, see ``read_outside_danger``); Lar's own files are refused
    either way."""
    root = ctx.workspace.resolve()
    target = _target(ctx, path)
    if not _inside(target, root) and (why := _secret_place(target)) is not None:
        raise PermissionError(f"{path!r} is outside the workspace ({root}) and never read: {why}")
    if not _inside(target, root) and not (outside and ctx.confirmed):
        if outside:
            raise PermissionError(
                f"{path!r} is outside the workspace ({root}); reading it needs the user's yes"
            )
        raise PermissionError(
            f"{path!r} is outside the workspace ({root}); this tool only changes files inside it"
        )
    _not_private(ctx, target, path)
    return target


def _not_private(ctx: ToolContext, target: Path, path: str) -> None:
    """``PermissionError`` where ``target`` is in Lar's home or a denied path."""
    for private in private_paths(ctx):
        if target == private or private in target.parents:
            raise PermissionError(
                f"{path!r} is in {private}, which holds Lar's own or denied files; "
                "tools cannot read or change it"
            )


_resolve = resolve_path

_SYSTEM_SECRETS = ("/proc", "/sys", "/dev", "/etc/shadow", "/etc/gshadow", "/etc/sudoers")


def _secret_place(target: Path) -> str | None:
    """Why ``target`` is never read from outside the workspace, even with a yes: the hidden
    folders and files of the home folder (keys, tokens, shell history) and system secrets."""
    home = Path.home().resolve()
    if home in target.parents:
        first = target.relative_to(home).parts[0]
        if first.startswith("."):
            return f"~/{first} is a hidden file or folder of your home (keys and tokens live there)"
    for place in _SYSTEM_SECRETS:
        if target == Path(place) or Path(place) in target.parents:
            return f"{place} holds system internals or secrets"
    return None


def read_outside_danger(args: dict[str, object], ctx: ToolContext) -> Verdict:
    """Reading outside the workspace is possible, with the user's yes (or ``--yes``)."""
    path = str(args.get("path") or ".")
    root = ctx.workspace.resolve()
    try:
        if _inside(_target(ctx, path), root):
            return Verdict("ok")
    except (OSError, RuntimeError):  # a symlink loop, or a path changing meanwhile
        return Verdict("ok")  # the tool itself then refuses or fails
    return Verdict("confirm", [f"reads {path}, outside the workspace ({root})"])


_SYS_OPENAT2 = 437  # the same number on every Linux architecture (new syscalls are unified)
_RESOLVE = 0x02 | 0x04 | 0x08  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
_openat2_missing = False


def _openat2(dirfd: int, rel: str, flags: int, mode: int) -> int:
    """openat2(2) beneath ``dirfd`` with no symlink anywhere on the way; -1 if unsupported."""
    global _openat2_missing
    if _openat2_missing:
        return -1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        _openat2_missing = True
        return -1
    how = struct.pack("QQQ", flags, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = libc.syscall(_SYS_OPENAT2, dirfd, rel.encode(), how, len(how))
    if fd >= 0:
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and not os.path.lexists(rel):
        _openat2_missing = True  # old kernel, or a seccomp filter that forbids it
        return -1
    if err == errno.ELOOP or err == errno.EXDEV:
        raise PermissionError(
            f"{rel!r} changed while it was opened (a symlink appeared on its path); not opened"
        )
    raise OSError(err, os.strerror(err), rel)


def _open(ctx: ToolContext, path: str, flags: int, mode: int = 0o644) -> int:
    """A descriptor for ``path`` in the workspace, with no window between check and use.

    The path is checked resolved (``_resolve``), then opened again relative to the workspace
    with no symlink allowed on the way: a directory swapped for a symlink in between makes the
    open fail instead of landing outside. Only regular files are opened (a FIFO would block).
    """
    target = _resolve(ctx, path)
    root = ctx.workspace.resolve()
    rel = "." if target == root else str(target.relative_to(root))
    flags |= os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    rootfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fd = _openat2(rootfd, rel, flags, mode)
            if fd < 0:
                fd = os.open(rel, flags, mode, dir_fd=rootfd)
                real = Path(os.readlink(f"/proc/self/fd/{fd}"))
                if real != root and root not in real.parents:
                    os.close(fd)
                    raise PermissionError(f"{path!r} changed while it was opened; not opened")
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened for writing
                raise PermissionError(f"{path!r} is not a regular file (a FIFO)") from None
            if exc.errno == errno.EISDIR:
                raise IsADirectoryError(
                    f"{path!r} is a folder, not a file (folder_list lists it)"
                ) from None
            raise
    finally:
        os.close(rootfd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{path!r} is a folder, not a file (folder_list lists it)")
        raise PermissionError(f"{path!r} is not a regular file (a FIFO, socket or device)")
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def _open_outside(ctx: ToolContext, path: str) -> int:
    """A confirmed read outside the workspace: the resolved file, opened without following a
    symlink swapped in since, and only if it is a regular file."""
    target = resolve_path(ctx, path, outside=True)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except IsADirectoryError:
        raise IsADirectoryError(
            f"{path!r} is a folder, not a file (folder_list lists it)"
        ) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{path!r} is a folder, not a file (folder_list lists it)")
        raise PermissionError(f"{path!r} is not a regular file (a FIFO, socket or device)")
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def word_count(text: str) -> int | None:
    """Words as ``wc -w`` counts them (runs between spaces), or None for text in a script
    written without spaces between words (Chinese, Japanese), where that count means nothing."""
    if any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in text):
        return None
    return len(text.split())


def bytes_text(n: int) -> str:
    """A total as a question in bytes wants it, with the rounded size beside it: '3405 bytes
    (3.3 KB)'. From '3.3 KB' alone a small model answers "in bytes" with 3.3 KB (measured)."""
    rounded = size_text(n)
    return rounded if n < 1024 else f"{n} bytes ({rounded})"


def size_text(n: int) -> str:
    """1,234 bytes → '1.2 KB' (powers of 1024, one decimal)."""
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{n} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def read_text(ctx: ToolContext, path: str) -> str:
    """A text file's content: in the workspace, or outside it when the user allowed this call."""
    not_a_web_address(path)
    try:
        outside = ctx.confirmed and not _inside(_target(ctx, path), ctx.workspace.resolve())
    except OSError:
        outside = False  # a path changing meanwhile: read beneath the workspace or fail
    try:
        fd = _open_outside(ctx, path) if outside else _open(ctx, path, os.O_RDONLY)
    except FileNotFoundError:
        where = "" if outside else f" in the workspace ({ctx.workspace})"
        raise FileNotFoundError(f"no file {path!r}{where}") from None
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as f:
        return f.read()


@tool(broad=True, reads_outside=True, read_only=True, danger=read_outside_danger)
def file_read(
    path: str,
    ctx: ToolContext,
    start_line: int = 1,
    end_line: int | None = None,
    keyword: str | None = None,
) -> str:
    """Read a text file (the whole file unless lines are given), with line numbers; use it for
    any question about a file's content. For a folder use folder_list.

    Args:
        path: File to read, relative to the workspace.
        start_line: First line to show (1-based); leave it out to start at the top.
        end_line: Last line to show; leave it out to read the whole file (up to 400 lines).
        keyword: Show only lines containing this text, with 2 lines of context.
    """
    text = read_text(ctx, path)
    lines = text.splitlines()
    if keyword:
        hits, at = 0, list[int]()
        for i, line in enumerate(lines):
            if n := line.lower().count(keyword.lower()):
                hits = hits + n
                at.append(i)
        times = f"{hits} time{'' if hits == 1 else 's'}"
        if len(at) > 2:  # a list of the matching lines, as grep gives them
            shown = "\n".join(f"L{i + 1}: {lines[i]}" for i in at)
            return f"{shown}\n[{keyword!r} appears {times}, on {len(at)} of {len(lines)} lines]"
        if at:
            # One or two matches with two lines around each, marked as such (grep's "-"), and
            # the matches' numbers said again: a small model otherwise gives the first number
            # shown. (Said for more matches, the numbers were copied back as the answer.)
            keep = {j for i in at for j in range(max(0, i - 2), min(len(lines), i + 3))}
            shown = "\n".join(f"L{i + 1}{':' if i in at else '-'} {lines[i]}" for i in sorted(keep))
            one = len(at) == 1
            where = ", ".join(str(i + 1) for i in at)
            return (
                f"{shown}\n[{keyword!r} appears {times}, on {len(at)} of {len(lines)} lines "
                f"({'line' if one else 'lines'} {where}); lines marked '-' are only near "
                f"{'it' if one else 'them'}]"
            )
        if len(lines) > _MAX_LINES:
            return f"{path}: no line contains {keyword!r} ({len(lines)} lines)"
        # A small file is shown whole: a keyword that is not in it was most likely a word of
        # the request ("tell me the sum"), not a search, and the content is what was wanted.
        whole = "\n".join(f"L{i}: {line}" for i, line in enumerate(lines, 1))
        return f"[no line contains {keyword!r}; the whole file:]\n{whole}"
    start = max(1, start_line)
    end = min(len(lines), end_line if end_line is not None else start + _MAX_LINES - 1)
    out = [f"L{i}: {lines[i - 1]}" for i in range(start, end + 1)]
    if start == 1 and end == len(lines) and lines:
        # Said once, so "how big is it" or "how many lines" needs no other tool or counting.
        n = len(lines)
        words = word_count(text)
        said = f", {words} word{'' if words == 1 else 's'}" if words is not None else ""
        out.append(
            f"[the whole file: {n} line{'' if n == 1 else 's'}{said}, "
            f"{size_text(len(text.encode()))}]"
        )
    if end < len(lines):  # said even for a range asked for: the model may have guessed it
        out.append(
            f"[lines {start}-{end} of {len(lines)}; {len(lines) - end} more lines: read on "
            f"with start_line={end + 1}]"
        )
    return "\n".join(out) if out else f"{path}: empty or no lines in range ({len(lines)} lines)"


def _write_danger(args: dict[str, object], ctx: ToolContext) -> Verdict:
    """Writes that make code run later on the host need a yes even when the tool is trusted."""
    path = Path(str(args.get("path", ""))).expanduser()
    target = path if path.is_absolute() else ctx.workspace / path
    why = runs_code_later(target)
    return Verdict("confirm", [f"writes {why}"]) if why else Verdict("ok")


@tool(permission="confirm", broad=True, danger=_write_danger)
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
    file.parent.mkdir(parents=True, exist_ok=True)
    how = {"create": os.O_EXCL, "append": os.O_APPEND, "overwrite": os.O_TRUNC}[mode]
    try:
        fd = _open(ctx, path, os.O_WRONLY | os.O_CREAT | how)
    except FileExistsError:
        raise FileExistsError(f"{path} exists; use mode 'append' or 'overwrite'") from None
    with os.fdopen(fd, "a" if mode == "append" else "w", encoding="utf-8") as f:
        f.write(content)
    return f"wrote {len(content)} characters to {path} ({mode})"


@tool(permission="confirm", broad=True, danger=_write_danger, replaces=("old", "new"))
def file_patch(path: str, old: str, new: str, ctx: ToolContext) -> str:
    """Replace one exact block of text in a file; the block must occur exactly once.

    Args:
        path: File to change, relative to the workspace.
        old: The exact text to replace.
        new: The replacement text.
    """
    try:
        fd = _open(ctx, path, os.O_RDWR)
    except FileNotFoundError:
        raise FileNotFoundError(f"no file {path!r} in {ctx.workspace}") from None
    with os.fdopen(fd, "r+", encoding="utf-8") as f:
        text = f.read()
        count = text.count(old) if old else 0
        if count != 1:
            # To add at the end the 1.5B patched a block that is not there (an empty or a
            # made-up ``old``), then told the user how to edit the file by hand.
            more = (
                "; to add text at the end, call file_write with mode 'append'" if not count else ""
            )
            raise ValueError(
                f"the block to replace occurs {count} times in {path}; it must occur exactly "
                f"once (copy it exactly, with more surrounding lines if needed){more}"
            )
        f.seek(0)
        f.write(text.replace(old, new, 1))
        f.truncate()
    return f"patched {path}: replaced {len(old)} characters with {len(new)}"


def _entry(ctx: ToolContext, path: str) -> Path:
    """A file or folder of the workspace as named, its last part not followed: the folder it
    is in resolved and checked (``resolve_path``), the entry itself may be a symlink (moving
    or deleting a link moves or deletes the link)."""
    given = Path(path.strip()).expanduser()
    if given.name in ("", ".", ".."):
        raise ValueError(f"{path!r} names no file or folder")
    folder = resolve_path(ctx, str(given.parent))
    entry = folder / given.name
    root = ctx.workspace.resolve()
    if entry == root:
        raise PermissionError(f"{path!r} is the workspace itself")
    _not_private(ctx, entry, path)
    return entry


def _move_danger(args: dict[str, object], ctx: ToolContext) -> Verdict:
    """A move that puts a file where code runs from later needs a yes, as a write there does."""
    return _write_danger({"path": args.get("destination", "")}, ctx)


@tool(permission="confirm", broad=True, danger=_move_danger)
def file_move(source: str, destination: str, ctx: ToolContext) -> str:
    """Move or rename a file or folder.

    Args:
        source: File or folder to move, relative to the workspace.
        destination: Its new path, or an existing folder to move it into.
    """
    src = _entry(ctx, source)
    if not os.path.lexists(src):
        raise FileNotFoundError(f"no file or folder {source!r} in {ctx.workspace}")
    dst = _entry(ctx, destination)
    if dst.is_dir() and not dst.is_symlink():
        dst = dst / src.name
    if dst == src:
        raise ValueError(f"{source!r} is already there")
    if src.is_dir() and not src.is_symlink() and src in dst.parents:
        raise ValueError(f"{destination!r} is inside {source!r}; a folder cannot go into itself")
    if os.path.lexists(dst):
        shown = dst.relative_to(ctx.workspace.resolve())
        raise FileExistsError(
            f"{shown} exists; nothing was moved (move or delete it first, or choose another name)"
        )
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, dst)
    return f"moved {source} to {dst.relative_to(ctx.workspace.resolve())}"


@tool(permission="confirm", broad=True)
def file_delete(path: str, ctx: ToolContext) -> str:
    """Delete a file (kept in Lar's trash, from where it can be put back).

    Args:
        path: File to delete, relative to the workspace.
    """
    entry = _entry(ctx, path)
    if not os.path.lexists(entry):
        raise FileNotFoundError(f"no file {path!r} in {ctx.workspace}")
    if entry.is_dir() and not entry.is_symlink():
        raise IsADirectoryError(
            f"{path!r} is a folder; file_delete deletes files, one at a time (folder_list "
            "lists what it holds)"
        )
    if ctx.home is None:
        entry.unlink()
        return f"deleted {path}"
    rel = entry.relative_to(ctx.workspace.resolve())
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    kept = ctx.home / "trash" / f"{stamp}-{ctx.call_id or os.getpid()}" / rel
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(entry, kept)  # a rename; a copy and delete where the home is on another disk
    return f"deleted {path} (kept in {kept} until you empty Lar's trash)"


file_move.offered = held_back
file_delete.offered = held_back
