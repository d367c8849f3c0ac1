"""What ``/skills``, ``/trace`` and ``/memory`` show in ``lar chat`` (A6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from lar.cli.render import print_error, short
from lar.errors import LarError

if TYPE_CHECKING:
    from lar.cli.chat import ChatSession

__all__ = ["skills", "trace", "memory"]


def skills(chat: ChatSession, _: str) -> None:
    """The installed skills: enabled or not, what each is for."""
    from lar.skills import SkillStore

    try:
        installed = SkillStore(chat.agent.runner.config.home).installed()
    except LarError as exc:
        print_error(exc)
        return
    rows = [item for item in installed if not item[0].get("draft")]
    if not rows:
        chat.out.print("no skills installed (lar skill install PATH)")
        return
    table = Table("skill", "state", "description")
    for entry, result, changed in rows:
        state = "changed!" if changed else ("enabled" if entry.get("enabled", True) else "disabled")
        about = short(result.skill.short(), 70) if result and result.skill else "unreadable"
        table.add_row(escape(entry["name"]), state, escape(about))
    chat.out.print(table)


def trace(chat: ChatSession, arg: str) -> None:
    """The last run of this chat (or run ``arg``) as ``lar trace show`` prints it."""
    from lar.cli.traces import trace_tree
    from lar.traces import TraceNotFound

    store = chat.agent.runner.traces
    wanted = arg or chat.last_run
    if store is None:
        chat.out.print("this chat keeps no traces")
        return
    if wanted is None:
        chat.out.print("no run yet in this chat; /trace ID shows any run (lar trace list)")
        return
    try:
        t = store.get(wanted)
        children = store.children(t.id)
    except TraceNotFound as exc:
        print_error(exc)
        return
    chat.out.print(trace_tree(t, children))


def memory(chat: ChatSession, query: str) -> None:
    """Memory's index, or what it recalls for ``query`` (nothing is written)."""
    held = chat.agent.session().memory
    if held is None:
        chat.out.print("memory is off in this chat (started with --no-memory)")
        return
    if not query:
        lines = held.index_lines()
        if not lines:
            chat.out.print("memory holds nothing yet")
            return
        chat.out.print(f"memory index ({len(lines)} lines; /memory QUERY recalls):")
        for line in lines:
            chat.out.print(f"  {escape(line)}")
        return
    found = held.search(query, 5)
    if not found:
        chat.out.print("nothing recalled for that")
        return
    table = Table("score", "id", "type", "content")
    for r in found:
        table.add_row(
            f"{r.score:.3f}", r.record.id, r.record.type, escape(short(r.record.content, 80))
        )
    chat.out.print(table)
