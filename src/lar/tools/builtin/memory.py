"""memory_search and start_long_term_update (B1, M3, M4)."""

from __future__ import annotations

from typing import Literal

from lar.memory.agent_memory import READ_ONLY_SUPPORT
from lar.tools.base import ToolContext, tool

__all__ = ["memory_search", "start_long_term_update"]

_OFF = "memory is off for this agent (start it with memory, e.g. `lar run` without --no-memory)"


@tool(broad=True, read_only=True)
def memory_search(query: str, ctx: ToolContext) -> str:
    """Search long-term memory: what the user told you before.

    Args:
        query: What to look for, as a question or keywords.
    """
    if ctx.memory is None:
        raise RuntimeError(_OFF)
    found = ctx.memory.search(query)
    if not found:
        return "nothing relevant remembered"
    return "\n".join(f"- {r.record.content} ({r.record.type}, {r.record.id})" for r in found)


@tool(broad=True, idempotent=True)  # a repeat merges into the first
def start_long_term_update(
    fact: str, ctx: ToolContext, type: Literal["fact", "preference", "skill"] = "fact"
) -> str:
    """Keep one fact the user or a tool result showed, for future tasks.

    Args:
        fact: One short sentence.
        type: fact, preference or skill (a how-to that worked).
    """
    if ctx.memory is None:
        raise RuntimeError(_OFF)
    outcome = ctx.memory.remember(fact, type)
    if outcome.reason == READ_ONLY_SUPPORT and ctx.ask_user is not None:
        # Only something read supports it: the user decides, with the fact shown to them.
        answer = ctx.ask_user(
            f"Keep this as a memory? It comes from content the agent read, not from you: "
            f"{outcome.content!r} (yes/no)"
        )
        if (answer or "").strip().lower() in ("y", "yes"):
            outcome = ctx.memory.write(outcome.content, type, source="user-confirmed")
    ctx.state.setdefault("memory_writes", []).append(
        {"action": outcome.action, "id": outcome.memory_id, "reason": outcome.reason}
    )
    if outcome.action == "refused":
        raise PermissionError(f"not stored: {outcome.reason}")  # the write policy said no
    if outcome.action == "merged":
        return f"already known ({outcome.memory_id})"
    if outcome.action == "superseded":
        return f"stored as {outcome.memory_id}, replacing {outcome.replaced}"
    return f"stored as {outcome.memory_id}"
