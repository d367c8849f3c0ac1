"""Running a turn's calls: recorded before and after, never twice after a crash (A3)."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator, Sequence

from lar.agents.state import Status, TaskRecorder
from lar.calling.coerce import resolve_name
from lar.calling.prompt import call_text
from lar.tools.base import Tool, ToolContext
from lar.tools.executor import ToolExecutor, tool_names
from lar.types import Code, Message, Notice, ToolCall, ToolError, ToolResult

__all__ = [
    "blocked",
    "skipped",
    "pending_calls",
    "execute",
    "unique_ids",
    "finish_task",
    "change_nothing",
    "unlisted",
]


def unlisted(
    calls: Sequence[ToolCall],
    listed: dict[str, Tool],
    known: dict[str, list[str]],
    held: dict[str, Tool],
) -> Iterator[Notice]:
    """The tools ``calls`` name that the request's listing left out (``Tool.offered``), moved
    from ``held`` into ``listed`` and ``known`` so they run as called; permissions still guard
    them. A gate keeps a small model's listing short; it does not put a tool out of reach."""
    for call in calls:
        if resolve_name(call.name, listed) is not None:
            continue
        name = resolve_name(call.name, held)
        if name is None:
            continue
        listed[name] = tool = held.pop(name)
        known.update(tool_names([tool]))
        yield Notice(Code.UNLISTED_TOOL, f"{name} is not listed for this request: run as called")


def change_nothing(calls: Sequence[ToolCall], tools: Sequence[Tool]) -> bool:
    """Whether every call is to a listed tool that cannot change anything and runs without
    asking (``calculate``, ``file_read``): safe to run with no model call left to follow."""
    by_name = {t.name: t for t in tools}
    return bool(calls) and all((t := by_name.get(c.name)) is not None and t.harmless for c in calls)


def blocked(call: ToolCall, reason: str) -> ToolResult:
    err = ToolError(error="loop detected", detail=reason, code=Code.LOOP_BLOCKED)
    return ToolResult(call.id, call.name, reason, ok=False, error=err, ran=False)


def _rerun_confirmed(call: ToolCall, ctx: ToolContext) -> bool:
    if ctx.ask_user is None:
        return False
    answer = ctx.ask_user(
        f"The task was cut off while {call_text(call.name, call.arguments)} was running, so it "
        "may or may not have taken effect. Run it again? (yes/no)"
    )
    return (answer or "").strip().lower() in ("y", "yes")


def _unknown_outcome(call: ToolCall) -> ToolResult:
    detail = (
        "the task was cut off while this call was running; it may or may not have taken "
        "effect, so it was not run again. Check its effect before repeating it"
    )
    return ToolResult(
        call.id,
        call.name,
        f"outcome unknown: {detail}",
        ok=False,
        error=ToolError("outcome unknown", detail, Code.UNKNOWN_OUTCOME),
    )


def skipped(
    call: ToolCall, detail: str = "not run: an earlier call in this turn failed"
) -> ToolResult:
    return ToolResult(
        call.id,
        call.name,
        detail,
        ok=False,
        error=ToolError("skipped", detail, Code.SKIPPED),
        ran=False,
    )


def pending_calls(history: list[Message]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet (a resumed task)."""
    for i in range(len(history) - 1, -1, -1):
        m = history[i]
        if m.role == "assistant":
            answered = {h.tool_call_id for h in history[i + 1 :] if h.role == "tool"}
            return [c for c in m.tool_calls if c.id not in answered]
        if m.role == "user":
            return []
    return []


async def execute(
    call: ToolCall, executor: ToolExecutor, ctx: ToolContext, recorder: TaskRecorder | None
) -> ToolResult:
    """Run one call, recorded before and after, unless a previous process already finished it.

    A call recorded as started but never as done was cut off by a crash at an unknown point:
    it may have had its effect. It runs again only if its tool is idempotent or the user says
    so; otherwise the model is told its outcome is unknown (at most once, not at least once).
    """
    if recorder is not None:
        done = recorder.completed(call.id)
        if done is not None:
            return done  # completed before a crash: never run twice
        if recorder.started(call.id):
            tool = executor.tools.get(call.name)
            if tool is None or not tool.idempotent:
                if not _rerun_confirmed(call, ctx):
                    result = _unknown_outcome(call)
                    recorder.call_done(result)
                    return result
        recorder.call_started(call)
    tool = executor.tools.get(call.name)
    waits = tool is not None and tool.interactive
    if recorder is not None and waits:
        recorder.status("waiting_user")
    result = await executor.run(call, ctx)
    if recorder is not None:
        if waits:
            recorder.status("running")
        recorder.call_done(result)
    return result


def finish_task(
    recorder: TaskRecorder | None,
    history: list[Message],
    ctx: ToolContext,
    status: Status,
    text: str,
) -> None:
    if recorder is not None:
        recorder.store.checkpoint(recorder.task_id, history, ctx.state)
        recorder.status(status, result=text)


def unique_ids(calls: list[ToolCall], history: list[Message]) -> list[ToolCall]:
    """Calls with ids not used before in this task: endpoints that omit ids get ``call_0`` from
    the client every turn, and a reused id would be answered with the earlier call's result."""
    seen = {c.id for m in history for c in m.tool_calls}
    unique = []
    for call in calls:
        if not call.id or call.id in seen:
            call = dataclasses.replace(call, id="call_" + secrets.token_hex(6))
        seen.add(call.id)
        unique.append(call)
    return unique
