"""Policies about skills (lar.skills) on small models."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from lar.agents.policy import ACCEPT, ChangeCalls, Policy, Retry, Turn, Verdict, builtin
from lar.calling.prompt import SKILL_PREFIX, call_text
from lar.tools.base import Tool
from lar.types import Code, Message, ToolCall

__all__ = ["ReopenedSkill", "FOLLOW_SYSTEM", "guide_of", "command_call"]

REOPEN_NUDGE = (
    "You opened {name} already: its guide is in the tool result above. Do my request with it "
    "now: reply with the tool call it needs (code_run, shell or another listed tool), using the "
    "values in my request."
)

FOLLOW_SYSTEM = (
    "You turn a how-to guide into action: given the guide and my request, write the one command "
    "from the guide that does my request, with my request's values filled in."
)
FOLLOW_ASK = (
    "Guide ({name}):\n{guide}\n\nMy request: {request}\n\n"
    "Reply with only the command, in one fenced code block (```bash or ```python)."
)
GUIDE_CHARS = 3_000
"""The most of a skill's guide the short question carries (about 800 tokens)."""

_FENCE = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)```", re.S)


def guide_of(history: Sequence[Message], name: str) -> str:
    """What ``name`` (a skill's tool) returned in this conversation, newest first, without the
    line that introduces it, within GUIDE_CHARS."""
    parts = [
        m.content.split("\n", 1)[-1]
        for m in reversed(history)
        if m.role == "tool" and m.name == name and not m.failed and m.content
    ]
    return "\n\n".join(parts)[:GUIDE_CHARS]


def command_call(reply: str, tools: Mapping[str, Tool], call_id: str) -> ToolCall | None:
    """The call that runs the reply's first fenced code block: ``code_run`` for Python, ``shell``
    (or ``code_run`` in shell) otherwise; None without a block or a tool to run it."""
    found = _FENCE.search(reply)
    code = found.group(2).strip() if found else ""
    if not found or not code:
        return None
    python = found.group(1).lower() in ("python", "py", "python3")
    if python:
        args = {"code": code, "language": "python"}
        return ToolCall(call_id, "code_run", args) if "code_run" in tools else None
    if "shell" in tools:
        return ToolCall(call_id, "shell", {"command": code})
    if "code_run" in tools:
        return ToolCall(call_id, "code_run", {"code": code, "language": "shell"})
    return None


def _reopened(turn: Turn, call: ToolCall) -> bool:
    """Whether ``call`` opens a skill's guide (not a skill with steps) that this run opened
    already: the same part, whatever else the model passed (arguments the guide does not take
    are the request's values, as if the skill could act on them)."""
    skill = getattr(turn.tools.get(call.name), "skill", None)
    if not call.name.startswith(SKILL_PREFIX) or skill is None or getattr(skill, "steps", None):
        return False
    same_part = {k: v for k, v in call.arguments.items() if k == "part"}
    return turn.key(ToolCall(call.id, call.name, same_part)) in turn.run.completed


@builtin
class ReopenedSkill(Policy):
    """A small model shown a skill's guide often calls the same skill again, with the request's
    values as arguments the skill does not take, as if the skill could do the work (bench/
    skills.py, dev set: after opening the right skill it made the call the guide shows in 2 of
    10 runs). That call says it wants to act, so the model is asked once, in a short prompt of
    only the guide and the request, for the command the guide shows; the call becomes that
    command (run with its tool's permission: shell and code_run ask the user). Without a
    command in the reply, the model is asked again with the guide in view."""

    name: ClassVar[str] = "reopened_skill"
    about: ClassVar[str] = (
        "a skill opened again: the guide's command for the request asked for in a short prompt"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if not turn.calls or turn.run.last_turn or turn.run.answer_mode or self.fired(turn):
            return ACCEPT
        if not all(_reopened(turn, c) for c in turn.calls):
            return ACCEPT
        reopened = turn.calls[0]
        guide = guide_of(turn.history, reopened.name)
        request = next(iter(turn.requests(1)), "")
        if guide and request:
            ask = FOLLOW_ASK.format(name=reopened.name, guide=guide, request=request)
            reply = await turn.ask([Message("system", FOLLOW_SYSTEM), Message("user", ask)])
            call = command_call(reply.content or "", turn.tools, reopened.id) if reply else None
            if call is not None:
                return ChangeCalls(
                    Code.REPEATED_CALL,
                    f"{reopened.name} reopened; its guide's command for the request: "
                    f"{call_text(call.name, call.arguments)}",
                    calls=(call,),
                )
        return Retry(
            Code.REPEATED_CALL,
            f"{reopened.name} reopened; asking for the call its guide needs",
            nudge=REOPEN_NUDGE.format(name=reopened.name),
        )
