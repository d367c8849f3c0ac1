"""ask_user and update_working_checkpoint (B1)."""

from __future__ import annotations

from lar.tools.base import ToolContext, tool

__all__ = ["ask_user", "update_working_checkpoint", "CHECKPOINT_KEY"]

CHECKPOINT_KEY = "working_checkpoint"
_CHECKPOINT_LIMIT = 1000


@tool(timeout_s=600, interactive=True, broad=True)
def ask_user(question: str, ctx: ToolContext) -> str:
    """Ask the user a question.

    Args:
        question: What you need to know.
    """
    if ctx.ask_user is None:
        raise RuntimeError("no user is available to answer; decide yourself or say what you need")
    answer = ctx.ask_user(question)
    if answer is None or not answer.strip():
        return "(the user gave no answer)"
    return answer


@tool(broad=True, idempotent=True)
def update_working_checkpoint(content: str, ctx: ToolContext) -> str:
    """Save notes on the current task (goal, done, next); shown to you every turn.

    Args:
        content: The notes, at most 1000 characters; replaces the previous notes.
    """
    ctx.state[CHECKPOINT_KEY] = content[:_CHECKPOINT_LIMIT]
    clipped = " (clipped to 1000 characters)" if len(content) > _CHECKPOINT_LIMIT else ""
    return "checkpoint saved" + clipped
