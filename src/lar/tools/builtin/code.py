"""code_run and shell (B1): code runs in the sandbox (lar.tools.sandbox), never in Lar's process.

Hard-line commands (B3) are refused before anything starts; the sandbox contains the rest.
Every run first snapshots the workspace for ``lar undo``; under ``confirm`` with an approver that
previews (lar.tools.staging), the run works on a copy and the user approves what it would change.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Callable
from typing import Any, Literal

from lar.tools import undo
from lar.tools.base import ToolContext, private_paths, tool
from lar.tools.danger import Verdict, assess
from lar.tools.sandbox import (
    Bridge,
    SandboxPolicy,
    SandboxResult,
    isolation_level,
    run_sandboxed,
    seccomp_filter,
)
from lar.tools.staging import CannotStage, Stage, Staged, kept_notice

__all__ = [
    "NOTEBOOK_RUNNER",
    "code_read",
    "code_run",
    "report",
    "sandbox_policy",
    "shell",
    "snapshot",
    "staged_run",
]

_MAX_OUTPUT = 8000

# Small models write `2**100` and expect to see the value, as in a notebook: run the code and
# print the value of a final bare expression, if any.
NOTEBOOK_RUNNER = """
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


def sandbox_policy(ctx: ToolContext, timeout_s: int) -> SandboxPolicy:
    cfg = ctx.sandbox
    hidden = tuple(private_paths(ctx))  # Lar's home stays hidden even inside the workspace
    if cfg is None:
        return SandboxPolicy(
            workspace=ctx.workspace,
            timeout_s=timeout_s,
            max_output=_MAX_OUTPUT,
            denied_paths=hidden,
        )
    return SandboxPolicy(
        workspace=ctx.workspace,
        timeout_s=timeout_s,
        max_output=_MAX_OUTPUT,
        network=cfg.network,
        cpu_s=cfg.cpu_s,
        memory_mb=cfg.memory_mb,
        file_size_mb=cfg.file_size_mb,
        max_procs=cfg.max_procs,
        disk_mb=cfg.disk_mb,
        denied_paths=hidden,
    )


def _code_danger(args: dict[str, Any], ctx: ToolContext) -> Verdict:
    language: Literal["shell", "python"] = "shell" if args.get("language") == "shell" else "python"
    return assess(str(args.get("code", "")), workspace=ctx.workspace, language=language)


def _shell_danger(args: dict[str, Any], ctx: ToolContext) -> Verdict:
    return assess(str(args.get("command", "")), workspace=ctx.workspace, language="shell")


@tool(
    permission="confirm",
    timeout_s=60,
    danger=_code_danger,
    broad=True,
    reads_outside=True,
    stages=True,
)
async def code_run(
    code: str,
    ctx: ToolContext,
    language: Literal["python", "shell"] = "python",
    timeout_s: int = 10,
) -> str | Staged:
    """Run Python or shell code: for data work and commands.

    Python runs like a notebook cell: the value of a final expression is printed.

    Args:
        code: The program text.
        language: python or shell.
        timeout_s: Seconds before the run is killed (1-50).
    """
    timeout_s = max(1, min(int(timeout_s), 50))
    verdict = assess(code, workspace=ctx.workspace, language=language)
    if verdict.level == "refuse":
        # Hard line (B3): no confirmation, not even --yes, makes these acceptable.
        raise PermissionError("refused, never run: " + "; ".join(verdict.reasons))
    argv = (
        [sys.executable, "-c", NOTEBOOK_RUNNER, code]
        if language == "python"
        else ["/bin/sh", "-c", code]
    )
    policy = sandbox_policy(ctx, timeout_s)
    what = f"{language}: {code}"
    if ctx.stage:
        return await staged_run(argv, policy, ctx, what, timeout_s)
    no_undo = await asyncio.to_thread(snapshot, ctx, policy, what)
    result = await run_sandboxed(argv, policy)
    return report(result, timeout_s) + no_undo


async def staged_run(
    argv: list[str],
    policy: SandboxPolicy,
    ctx: ToolContext,
    what: str,
    timeout_s: int,
    bridge: Bridge | None = None,
    after: Callable[[str], str] | None = None,
) -> Staged:
    """Run on a copy mounted at the workspace; the executor asks, then applies or discards.
    ``bridge`` answers the program's requests (CodeAct's tool calls); ``after`` adds to the
    report what the program's requests did."""
    from lar.config import lar_home

    if isolation_level() != "bubblewrap":
        raise CannotStage("no mount namespace (bubblewrap) to put a copy in the workspace's place")
    if policy.network:
        raise CannotStage("the sandbox has network access: a run's effects may leave the machine")
    home = ctx.home or lar_home()
    stage = await asyncio.to_thread(Stage, ctx.workspace, home, list(policy.denied_paths))
    try:
        result = await run_sandboxed(argv, dataclasses.replace(policy, root=stage.path), bridge)
        changes = await asyncio.to_thread(stage.diff)
    except BaseException:
        await asyncio.to_thread(stage.discard)
        raise
    text = report(result, timeout_s)
    if after is not None:
        text = after(text)

    def apply() -> str:
        try:
            no_undo = "" if changes.empty else snapshot(ctx, policy, what)
            kept = stage.apply(changes)
        finally:
            stage.discard()
        return text + no_undo + kept_notice(kept)

    return Staged(value=text, changes=changes, apply=apply, discard=stage.discard)


def report(result: SandboxResult, timeout_s: int) -> str:
    if result.timed_out:
        return f"exit_code: killed after {timeout_s}s timeout"
    parts = [f"exit_code: {result.exit_code}"]
    if result.stdout:
        parts.append("stdout:\n" + result.stdout.rstrip())
    if result.stderr:
        parts.append("stderr:\n" + result.stderr.rstrip())
    return "\n".join(parts)


def snapshot(ctx: ToolContext, policy: SandboxPolicy, what: str) -> str:
    """Snapshot the workspace for `lar undo`; a note for the result when none could be taken."""
    from lar.config import lar_home

    home = ctx.home or lar_home()
    try:
        undo.take(ctx.workspace, home, what, list(policy.denied_paths))
    except undo.NoSnapshot as exc:
        return f"\n(no undo for this run: {exc})"
    return ""


@tool(
    permission="confirm",
    timeout_s=60,
    danger=_shell_danger,
    broad=True,
    reads_outside=True,
    stages=True,
)
async def shell(command: str, ctx: ToolContext, timeout_s: int = 10) -> str | Staged:
    """Run a shell command in the workspace.

    Args:
        command: The command line.
        timeout_s: Seconds before it is killed (1-50).
    """
    result: str | Staged = await code_run.fn(command, ctx, language="shell", timeout_s=timeout_s)
    return result


@tool(permission="auto", timeout_s=60, broad=True, reads_outside=True, read_only=True)
async def code_read(code: str, ctx: ToolContext, timeout_s: int = 10) -> str:
    """Compute with Python over the files here, read-only: counts, sums, tables, dates.

    It cannot change a file or reach the network; print what the answer needs.

    Args:
        code: The Python program (a final expression is printed).
        timeout_s: Seconds before the run is killed (1-50).
    """
    # Asks no one: the workspace is mounted read-only, the network and Lar's home are out of
    # reach, and the syscall filter refuses opening any file for writing (a FIFO or a device in
    # the workspace) and making sockets (a Unix socket there may lead elsewhere). Without
    # bubblewrap and that filter none of this holds, so it does not run (code_run, which asks
    # first, still does).
    if isolation_level() != "bubblewrap" or seccomp_filter(read_only=True) is None:
        raise RuntimeError(
            "read-only code needs bubblewrap and libseccomp (a read-only mount and a syscall "
            "filter), which this machine lacks; use code_run, which asks first"
        )
    timeout_s = max(1, min(int(timeout_s), 50))
    verdict = assess(code, workspace=ctx.workspace, language="python")
    if verdict.level == "refuse":
        raise PermissionError("refused, never run: " + "; ".join(verdict.reasons))
    policy = dataclasses.replace(sandbox_policy(ctx, timeout_s), network=False, read_only=True)
    result = await run_sandboxed([sys.executable, "-c", NOTEBOOK_RUNNER, code], policy)
    return report(result, timeout_s)
