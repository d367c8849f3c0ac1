"""``lar mcp``: the configured MCP servers and their tools (``list``), and Lar as an MCP server
(``serve``: stdio, or Streamable HTTP on loopback)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from lar.cli.render import print_error, short
from lar.cli.tables import table
from lar.errors import LarError

__all__ = ["mcp_app"]

mcp_app = typer.Typer(
    help="MCP: servers whose tools Lar uses (`mcp:` in config.yaml), and Lar as a server."
)


@mcp_app.command("list")
def list_servers() -> None:
    """Start each configured server, and show whether it answered and the tools it brings."""
    from lar.config import load_config
    from lar.mcp import McpServers

    try:
        config = load_config()
        servers = McpServers(config.mcp, log_dir=config.home / "logs")
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    out = Console(highlight=False, soft_wrap=True)
    if not config.mcp:
        out.print("no MCP servers configured (add them under `mcp:` in config.yaml)")
        return
    try:
        tools = servers.start()
        listing = table("tool", "permission", "description", text="description")
        for t in tools:
            listing.add_row(t.name, t.permission, escape(short(t.description, 100)))
        for server in servers.servers:
            how = server.settings.command or server.settings.url
            out.print(escape(f"{server.name}: {server.state} ({how})"))
        for note in servers.notes:
            out.print(f"[yellow]warning:[/yellow] {escape(note)}")
        if tools:
            out.print(listing)
    finally:
        servers.close()
    if servers.notes:
        raise typer.Exit(1)


@mcp_app.command()
def serve(
    http: Annotated[
        bool, typer.Option("--http", help="Streamable HTTP on 127.0.0.1 instead of stdio.")
    ] = False,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --http.")] = 8766,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            "--allow",
            help="A tool that asks first (shell, file_write…) MCP clients may run unasked. "
            "Repeat for more; any other such call is refused.",
        ),
    ] = None,
) -> None:
    """Offer Lar's tools and memory (lar_memory_search, lar_memory_add) to MCP clients.

    Tools that ask first are marked so (destructive_hint, _meta lar/permission) and are refused
    unless named by --allow; a call the danger check flags (rm -r, curl | sh, a git hook) is
    refused even then. Over --http every request needs the token (server.token, else
    $LAR_HOME/server.token) as Authorization: Bearer. Other servers' tools (from `mcp:`) are
    not passed on.
    """
    import anyio

    from lar.agents import Agent, Runner
    from lar.cli.toolset import agent_tools
    from lar.config import load_config
    from lar.server import build_mcp_server, mcp_http_app

    try:
        config = load_config()
        tools = agent_tools(config, mcp=False)
        unknown = sorted(set(allow or []) - {t.name for t in tools})
        if unknown:
            raise LarError(f"--allow: unknown tool {', '.join(map(repr, unknown))}")
        runner = Runner(config=config, memory=True, traces=False)
        server = build_mcp_server(runner, Agent(tools=tools), allowed=allow or [])
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    if http:
        import uvicorn

        try:
            app = mcp_http_app(server, config)
        except LarError as exc:
            print_error(exc)
            raise typer.Exit(2) from None
        where = "server.token" if config.server.token else str(config.home / "server.token")
        Console(stderr=True).print(
            f"MCP on http://127.0.0.1:{port}/mcp; clients send Authorization: Bearer with the "
            f"token in {where} (Ctrl-C stops it)"
        )
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return

    async def stdio() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(stdio)
