"""The tools a command's agent gets, gathered one way for `lar run`, `chat`, `schedule` and
`mcp serve`."""

from __future__ import annotations

from rich.markup import escape

from lar.cli.render import console_err
from lar.config import LarConfig
from lar.tools import Tool

__all__ = ["agent_tools"]


def agent_tools(config: LarConfig, *, mcp: bool = True) -> list[Tool]:
    """Every tool an agent of this config gets (lar.agents.gather_tools); MCP servers started
    here are closed at exit; what is left out is warned of on stderr, even when quiet."""
    import atexit

    from lar.agents import gather_tools

    found = gather_tools(config, mcp=mcp)
    if found.mcp is not None:
        atexit.register(found.close)
    for note in found.notes:
        console_err().print(f"[yellow]warning:[/yellow] {escape(note)}")
    return found.tools
