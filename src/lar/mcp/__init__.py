"""MCP (I5): configured servers' tools as Lar tools (``client``). Lar as an MCP server is
``lar mcp serve`` (lar.server.mcp)."""

from lar.mcp.client import SEPARATOR, McpError, McpServer, McpServers

__all__ = ["McpServer", "McpServers", "McpError", "SEPARATOR"]
