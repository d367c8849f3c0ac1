"""The tools a command's agent gets, gathered one way for `lar run`, `chat`, `schedule` and
`mcp serve`."""

from __future__ import annotations

from rich.markup import escape

from lar.cli.render import console_err
from lar.config import LarConfig
from lar.tools import Tool

__all__ = ["agent_tools"]


def agent_tools(config: LarConfig, *, mcp: bool = True) -> list[Tool]:
    """Every tool an agent of this config gets: built-in, the user's, the installed skills and
    (``mcp``) the configured MCP servers' (started here, closed at exit); what is left out is
    warned of on stderr."""
    from lar.skills import installed_skill_tools
    from lar.tools import builtin_tools, discover_tools

    tools = [*builtin_tools(), *discover_tools(config.tools_dir)]
    skills, notes = (
        installed_skill_tools(config.home, [t.name for t in tools])
        if config.skills.enabled
        else ([], [])
    )
    tools += skills
    if mcp and config.mcp:
        import atexit

        from lar.mcp import McpServers

        servers = McpServers(config.mcp, log_dir=config.home / "logs")
        tools += servers.start()
        notes = [*notes, *servers.notes]
        atexit.register(servers.close)
    for note in notes:  # even when quiet: a skill or server left out must be seen
        console_err().print(f"[yellow]warning:[/yellow] {escape(note)}")
    return tools
