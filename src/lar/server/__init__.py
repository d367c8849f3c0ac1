"""``lar serve`` (I2, I3): the agent as a local service — OpenAI-compatible chat, Lar's own API,
approvals, health and the web panel, for many sessions in one process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

__all__ = [
    "Hub",
    "create_app",
    "serve",
    "ServeError",
    "is_loopback",
    "build_mcp_server",
    "mcp_http_app",
    "server_token",
    "Guard",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Hub": "lar.server.hub",
        "create_app": "lar.server.app",
        "serve": "lar.server.start",
        "ServeError": "lar.server.start",
        "is_loopback": "lar.server.security",
        "build_mcp_server": "lar.server.mcp",
        "mcp_http_app": "lar.server.mcp",
        "server_token": "lar.server.token",
        "Guard": "lar.server.security",
    },
)

if TYPE_CHECKING:
    from lar.server.app import create_app
    from lar.server.hub import Hub
    from lar.server.mcp import build_mcp_server, mcp_http_app
    from lar.server.security import Guard, is_loopback
    from lar.server.start import ServeError, serve
    from lar.server.token import server_token
