"""code_run (B1): Python or shell in a subprocess with a timeout.

This is the plain first version: a separate process group killed whole on timeout, output
truncated. Sandboxing (scrubbed env, rlimits, namespaces) arrives with the sandbox issue.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Literal

from lar.tools.base import ToolContext, tool
from lar.tools.danger import assess

__all__ = ["code_run"]

_MAX_OUTPUT = 8000

# Small models write `2**100` and expect to see the value, as in a notebook: run the code and
# print the value of a final bare expression, if any.
_NOTEBOOK_RUNNER = """
import ast, sys
src = sys.argv[1]
tree = ast.parse(src, "<code_run>")
last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
ns = {"__name__": "__main__"}
exec(compile(tree, "<code_run>", "exec"), ns)
if last is not None:
    value = eval(compile(ast.Expression(last.value), "<code_run>", "eval"), ns)
    if value is not None:
        print(repr(value))
"""


async def _read_capped(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, int]:
    """Read everything (so the child never blocks on a full pipe) but keep only ``limit`` bytes."""
    if stream is None:
        return b"", 0
    kept = bytearray()
    total = 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        if len(kept) < limit:
            kept.extend(chunk[: limit - len(kept)])
    return bytes(kept), total


def _fmt(name: str, data: bytes, total: int) -> str:
    text = data.decode("utf-8", errors="replace")
    if total > len(data):
        text += f"\n[{name} truncated: {total - len(data)} more bytes]"
    return text


@tool(permission="confirm", timeout_s=60)
async def code_run(
    code: str,
    ctx: ToolContext,
    language: Literal["python", "shell"] = "python",
    timeout_s: int = 10,
) -> str:
    """Run Python or shell code: for calculations, data work and commands.

    Python runs like a notebook cell: the value of a final expression is printed.

    Args:
        code: The program text.
        language: python or shell.
        timeout_s: Seconds before the run is killed (1-50).
    """
    timeout_s = max(1, min(int(timeout_s), 50))
    verdict = assess(code, workspace=ctx.workspace)
    if verdict.level == "refuse":
        # Hard line (B3): no confirmation, not even --yes, makes these acceptable.
        raise PermissionError("refused, never run: " + "; ".join(verdict.reasons))
    argv = (
        [sys.executable, "-c", _NOTEBOOK_RUNNER, code]
        if language == "python"
        else ["/bin/sh", "-c", code]
    )
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=ctx.workspace,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    readers = asyncio.gather(
        _read_capped(proc.stdout, _MAX_OUTPUT), _read_capped(proc.stderr, _MAX_OUTPUT)
    )
    timed_out = False
    try:
        (out, out_total), (err, err_total) = await asyncio.wait_for(readers, timeout_s)
        await asyncio.wait_for(proc.wait(), 5)
    except TimeoutError:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        out, out_total, err, err_total = b"", 0, b"", 0
    finally:
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if timed_out:
        return f"exit_code: killed after {timeout_s}s timeout"
    parts = [f"exit_code: {proc.returncode}"]
    if out_total:
        parts.append("stdout:\n" + _fmt("stdout", out, out_total).rstrip())
    if err_total:
        parts.append("stderr:\n" + _fmt("stderr", err, err_total).rstrip())
    return "\n".join(parts)
