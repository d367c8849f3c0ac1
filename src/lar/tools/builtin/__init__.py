"""The built-in atomic tools (B1)."""

from __future__ import annotations

from lar.tools.base import Tool, ToolRegistry
from lar.tools.builtin.calc import calculate, convert_units
from lar.tools.builtin.code import code_read, code_run, shell
from lar.tools.builtin.dates import calendar
from lar.tools.builtin.files import file_delete, file_move, file_patch, file_read, file_write
from lar.tools.builtin.folders import file_find, folder_list
from lar.tools.builtin.interaction import ask_user, update_working_checkpoint
from lar.tools.builtin.memory import memory_search, start_long_term_update
from lar.tools.builtin.notes import notes, todo
from lar.tools.builtin.schedule import schedule
from lar.tools.builtin.web import web_scan

__all__ = ["BUILTIN_TOOLS", "OPTIONAL_TOOLS", "builtin_tools", "optional_tools"]

BUILTIN_TOOLS: tuple[Tool, ...] = (
    file_read,
    file_write,
    file_patch,
    folder_list,
    file_find,
    calculate,
    convert_units,
    code_run,
    shell,
    web_scan,
    ask_user,
    update_working_checkpoint,
    memory_search,
    start_long_term_update,
    notes,
    todo,
    schedule,
    calendar,  # listed only for a request that names a date (``Tool.offered``)
    file_move,  # never listed: run when the model calls it by name (``held_back``)
    file_delete,
)

OPTIONAL_TOOLS: tuple[Tool, ...] = (code_read,)
"""Built in but not offered unless ``tools.extra`` names them: each joins the default set only
once an ablation on generated draws shows it helps (docs/evals.md)."""

for _t in (*BUILTIN_TOOLS, *OPTIONAL_TOOLS):
    if not ToolRegistry.contains(_t.name):
        ToolRegistry.add(_t.name, _t)


def builtin_tools() -> list[Tool]:
    return list(BUILTIN_TOOLS)


def optional_tools(names: list[str]) -> list[Tool]:
    """The optional tools named (``tools.extra``); ``KeyError`` naming the first unknown one
    and the known ones. A name of the default set (``calendar`` was optional once) is taken as
    already there."""
    known = {t.name: t for t in OPTIONAL_TOOLS}
    default = {t.name for t in BUILTIN_TOOLS}
    for name in names:
        if name not in known and name not in default:
            raise KeyError(f"{name!r} is not an optional tool; known: {', '.join(sorted(known))}")
    return [known[name] for name in names if name in known]
