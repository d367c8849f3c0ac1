"""File tools against a hostile workspace (issue 16, Must show 8): a directory swapped for a
symlink between check and use (renameat2), and a FIFO where a file should be."""

from __future__ import annotations

import asyncio
import ctypes
import os
import threading
from pathlib import Path

import pytest

from lar.tools.base import ToolContext
from lar.tools.builtin import builtin_tools
from lar.tools.executor import ToolExecutor
from lar.types import ToolCall, ToolResult

TRIES = 2000
_libc = ctypes.CDLL(None, use_errno=True)
if not hasattr(_libc, "renameat2"):
    pytest.skip("this libc has no renameat2 (needs glibc ≥ 2.28)", allow_module_level=True)


def exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (RENAME_EXCHANGE), as an attacker racing the tool would."""
    if _libc.renameat2(-100, bytes(a), -100, bytes(b), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


def run(executor: ToolExecutor, ctx: ToolContext, name: str, **args: object) -> ToolResult:
    return asyncio.run(executor.run(ToolCall("c", name, dict(args)), ctx))


def test_a_directory_swapped_for_a_symlink_never_leads_outside(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "f.txt").write_text("inside")
    (outside / "f.txt").write_text("outside-secret")
    (ws / "link").symlink_to(outside)
    stop = threading.Event()

    swaps = [0]
    failures: list[int] = []

    def racer() -> None:
        while not stop.is_set():
            try:
                exchange(ws / "d", ws / "link")
                swaps[0] += 1
            except OSError as exc:
                failures.append(exc.errno or 0)

    # Writes are allowed; a read that asks (it would read outside) is not: no unapproved
    # read may ever land outside the workspace.
    executor = ToolExecutor(builtin_tools(), approver=lambda c, t: t.name != "file_read")
    ctx = ToolContext(workspace=ws)
    thread = threading.Thread(target=racer, daemon=True)
    thread.start()
    leaked_reads = 0
    try:
        for n in range(TRIES):
            read = run(executor, ctx, "file_read", path="d/f.txt")
            leaked_reads += "outside-secret" in read.content
            run(executor, ctx, "file_write", path=f"d/w{n}.txt", content="x", mode="overwrite")
    finally:
        stop.set()
        thread.join(5)
        executor.close()
    written_outside = [p.name for p in outside.iterdir() if p.name.startswith("w")]
    assert leaked_reads == 0
    assert written_outside == []
    assert (outside / "f.txt").read_text() == "outside-secret"
    assert swaps[0] > TRIES, (swaps, failures[:5])  # the race was real throughout


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "pipe")
    executor = ToolExecutor(builtin_tools(), approver=lambda c, t: True)
    ctx = ToolContext(workspace=ws)
    try:
        for mode in ("overwrite", "append"):
            r = run(executor, ctx, "file_write", path="pipe", content="x", mode=mode)
            assert not r.ok and "not a regular file" in r.content
        r = run(executor, ctx, "file_read", path="pipe")
        assert not r.ok and "not a regular file" in r.content
        r = run(executor, ctx, "file_patch", path="pipe", old="a", new="b")
        assert not r.ok and "not a regular file" in r.content
    finally:
        executor.close()


def test_reading_a_folder_says_it_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    executor = ToolExecutor(builtin_tools(), approver=lambda c, t: True)
    try:
        r = run(executor, ToolContext(workspace=tmp_path), "file_read", path="sub")
    finally:
        executor.close()
    assert not r.ok and "is a folder" in r.content
