"""Tools (T1, T6–T9): ``@tool``, the executor, the sandbox, undo snapshots, previews and the
built-in tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

__all__ = [
    "Tool",
    "SandboxPolicy",
    "run_sandboxed",
    "web_scan",
    "ToolContext",
    "private_paths",
    "builtin_tools",
    "optional_tools",
    "discover_tools",
    "Changes",
    "isolation_level",
    "process_cap_available",
    "seccomp_filter",
    "snapshots",
    "restore",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Tool": "lar.tools.base",
        "SandboxPolicy": "lar.tools.sandbox",
        "run_sandboxed": "lar.tools.sandbox",
        "web_scan": "lar.tools.builtin.web",
        "ToolContext": "lar.tools.base",
        "private_paths": "lar.tools.base",
        "builtin_tools": "lar.tools.builtin",
        "optional_tools": "lar.tools.builtin",
        "discover_tools": "lar.tools.discovery",
        "Changes": "lar.tools.staging",
        "isolation_level": "lar.tools.sandbox",
        "process_cap_available": "lar.tools.sandbox",
        "seccomp_filter": "lar.tools.sandbox",
        "snapshots": "lar.tools.undo",
        "restore": "lar.tools.undo",
    },
)

if TYPE_CHECKING:
    from lar.tools.base import Tool, ToolContext, private_paths
    from lar.tools.builtin import builtin_tools, optional_tools
    from lar.tools.builtin.web import web_scan
    from lar.tools.discovery import discover_tools
    from lar.tools.sandbox import (
        SandboxPolicy,
        isolation_level,
        process_cap_available,
        run_sandboxed,
        seccomp_filter,
    )
    from lar.tools.staging import Changes
    from lar.tools.undo import restore, snapshots
