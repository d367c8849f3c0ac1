"""The tools an agent of a config gets, gathered one way for every front end (``lar run``,
``chat``, ``schedule``, ``mcp serve``, ``lar serve``): built-in, the user's tool files, the
installed skills and the configured MCP servers'."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lar.config import LarConfig
from lar.errors import ConfigError
from lar.tools.base import Tool

if TYPE_CHECKING:
    from lar.mcp import McpServers

__all__ = ["Toolset", "gather_tools"]


@dataclass(slots=True)
class Toolset:
    tools: list[Tool]
    notes: list[str] = field(default_factory=list)
    """What was left out and why (a skill changed on disk, a server that did not start)."""
    mcp: McpServers | None = None
    """The started MCP servers; ``close`` stops them."""

    def close(self) -> None:
        if self.mcp is not None:
            self.mcp.close()


def configured_builtins(config: LarConfig) -> list[Tool]:
    """Lar's own tools as ``config`` offers them: the default set without ``tools.without``,
    and the optional ones ``tools.extra`` names. ``ConfigError`` naming the key and the
    unknown name."""
    from lar.tools import builtin_tools, optional_tools

    where = str(config.home / "config.yaml")
    try:
        extra = optional_tools(config.tools.extra)
    except KeyError as exc:
        raise ConfigError(
            f"{where}: tools.extra: {exc.args[0]}", file=where, key="tools.extra"
        ) from None
    default = builtin_tools()
    unknown = sorted(set(config.tools.without) - {t.name for t in default})
    if unknown:
        known = ", ".join(t.name for t in default)
        raise ConfigError(
            f"{where}: tools.without: {unknown[0]!r} is not a built-in tool of the default set; "
            f"known: {known}",
            file=where,
            key="tools.without",
        )
    return [*(t for t in default if t.name not in config.tools.without), *extra]


def gather_tools(config: LarConfig, *, mcp: bool = True) -> Toolset:
    """Every tool for ``config``; with ``mcp`` its MCP servers are started (``Toolset.close``)."""
    from lar.skills import installed_skill_tools
    from lar.tools import discover_tools

    tools = [*configured_builtins(config), *discover_tools(config.tools_dir)]
    skills, notes = (
        installed_skill_tools(config.home, [t.name for t in tools])
        if config.skills.enabled
        else ([], [])
    )
    found = Toolset([*tools, *skills], list(notes))
    if mcp and config.mcp:
        from lar.mcp import McpServers

        found.mcp = McpServers(config.mcp, log_dir=config.home / "logs")
        found.tools += found.mcp.start()
        found.notes += found.mcp.notes
    return found
