"""CodeAct (A4): the model writes Python, which runs in the sandbox with the agent's tools
callable inside it as functions; what it prints comes back as the tool result.

The code never runs in Lar's process. Inside the sandbox each tool is a function that writes
a request line to a pipe (``lar.tools.sandbox.Bridge``); Lar runs the call through the agent's
own executor — allowlist, permissions, confirmations and circuit breakers as for a call from
the model — and writes the result back. No network and no shared files are involved.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Sequence
from typing import Any, Literal

from lar.calling.prompt import first_sentence
from lar.tools.base import Tool, ToolContext, tool
from lar.tools.builtin.code import (
    NOTEBOOK_RUNNER,
    report,
    sandbox_policy,
    snapshot,
    staged_run,
)
from lar.tools.danger import Verdict, assess
from lar.tools.executor import ToolExecutor
from lar.tools.sandbox import run_sandboxed
from lar.tools.signature import signature
from lar.tools.staging import Staged
from lar.types import ToolCall

__all__ = ["codeact_tool", "CODEACT_TOOL", "MAX_CALLS", "function_name"]

CODEACT_TOOL = "code_run"
"""The name the protocol parser gives a reply's ```python block (``codeact=True``)."""
MAX_CALLS = 50
"""Tool calls one piece of code may make."""

# Defines the tools as functions, then runs the code like a notebook cell (NOTEBOOK_RUNNER).
_BRIDGE = """
import json, os, sys
_w, _r = (int(x) for x in os.environ["LAR_BRIDGE_FDS"].split(","))
_requests = os.fdopen(_w, "w", buffering=1)
_answers = os.fdopen(_r, "r")
class ToolError(Exception):
    pass
def _call(name, arguments):
    _requests.write(json.dumps({"name": name, "arguments": arguments}) + "\\n")
    _requests.flush()
    line = _answers.readline()
    answer = json.loads(line) if line else {"ok": False, "error": "no answer from Lar"}
    if not answer.get("ok"):
        raise ToolError(name + ": " + str(answer.get("error")))
    return answer.get("value")
def _make(name, params):
    def call(*args, **kwargs):
        if len(args) > len(params):
            raise TypeError(name + "() takes at most " + str(len(params)) + " arguments")
        kwargs.update(zip(params, args))
        return _call(name, kwargs)
    call.__name__ = name
    return call
_tools = {f: _make(t, p) for f, t, p in json.loads(sys.argv[2])}
"""
_RUN = NOTEBOOK_RUNNER.replace(
    'ns = {"__name__": "__main__"}',
    'ns = {"__name__": "__main__", "ToolError": ToolError, **_tools}',
)
assert _RUN != NOTEBOOK_RUNNER
RUNNER = _BRIDGE + _RUN


def function_name(name: str) -> str:
    """A tool's name as a Python identifier (``time.now`` → ``time_now``)."""
    out = re.sub(r"\W", "_", name)
    return out if out.isidentifier() and not out[0].isdigit() else f"tool_{out}"


def describe(tools: Sequence[Tool]) -> str:
    """The instructions: the functions the code may call, one line each."""
    lines = [
        f"{function_name(t.name)}{signature(t)[len(t.name) :]}: {first_sentence(t.description)}"
        for t in tools
    ]
    functions = "\n".join(lines) if lines else "(none: plain Python only)"
    return (
        "Run Python in a sandbox where the user's tools are functions. To act, reply with one "
        "```python block. It runs in a sandbox in which these functions are ready to call, no "
        "import needed; each returns its tool's result:\n"
        f"{functions}\n"
        "Print what you need to see: the printed output comes back to you. Never work out a "
        "tool's result yourself; call its function. When you have the result, answer me in "
        "plain text, without code."
    )


def _danger(args: dict[str, Any], ctx: ToolContext) -> Verdict:
    return assess(str(args.get("code", "")), workspace=ctx.workspace, language="python")


def codeact_tool(inner: ToolExecutor) -> Tool:
    """The one tool a CodeAct agent's model sees: Python with ``inner``'s visible tools as
    functions (each call run by ``inner``)."""
    tools = inner.visible()
    table = [
        (function_name(t.name), t.name, list(t.parameters.get("properties", {}))) for t in tools
    ]

    async def code_run(
        code: str,
        ctx: ToolContext,
        language: Literal["python"] = "python",
        timeout_s: int = 30,
    ) -> str | Staged:
        """Run Python with the user's tools as functions."""
        timeout_s = max(1, min(int(timeout_s), 120))
        verdict = assess(code, workspace=ctx.workspace, language="python")
        if verdict.level == "refuse":
            raise PermissionError("refused, never run: " + "; ".join(verdict.reasons))
        calls: list[str] = []
        lock = asyncio.Lock()  # one request at a time: the code waits for each answer anyway

        async def answer(request: dict[str, Any]) -> dict[str, Any]:
            async with lock:
                name, arguments = request.get("name"), request.get("arguments")
                if not isinstance(name, str) or not isinstance(arguments, dict):
                    return {"ok": False, "error": "a request needs a name and arguments"}
                if len(calls) >= MAX_CALLS:
                    return {"ok": False, "error": f"more than {MAX_CALLS} tool calls in one run"}
                call = ToolCall(f"{ctx.call_id or 'code'}/{len(calls) + 1}", name, arguments)
                result = await inner.run(call, ctx)
                shown = " ".join(result.content.split())
                calls.append(f"{name}({_args(arguments)}) → {shown[:120]}")
                if not result.ok:
                    return {"ok": False, "error": result.content}
                value = result.value
                try:
                    json.dumps(value)
                except (TypeError, ValueError):
                    value = result.content
                return {"ok": True, "value": value}

        def with_calls(text: str) -> str:
            if calls:
                text += "\ntool calls made by the code:\n" + "\n".join(f"- {c}" for c in calls)
            return text

        argv = [sys.executable, "-c", RUNNER, code, json.dumps(table)]
        policy = sandbox_policy(ctx, timeout_s)
        if ctx.stage:  # on a copy: what the code itself changes is asked about, if anything
            return await staged_run(
                argv, policy, ctx, f"python: {code}", timeout_s, answer, with_calls
            )
        no_undo = await asyncio.to_thread(snapshot, ctx, policy, f"python: {code}")
        result = await run_sandboxed(argv, policy, answer)
        return with_calls(report(result, timeout_s) + no_undo)

    return tool(
        name=CODEACT_TOOL,
        description=describe(tools),
        permission="confirm",
        timeout_s=150,
        danger=_danger,
        broad=True,
        reads_outside=True,
        stages=True,
    )(code_run)


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in arguments.items()
    )
