"""``lar serve``: the agent as a local service (OpenAI-compatible API, Lar's API, web panel)."""

from __future__ import annotations

from typing import Annotated

import typer

from lar.cli.options import WorkspaceOpt
from lar.cli.render import console_err, exit_code, print_error
from lar.errors import LarError

__all__ = ["serve"]


def serve(
    host: Annotated[
        str | None,
        typer.Option(help="Address to listen on (default: server.host, 127.0.0.1)."),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Port (default: server.port, 8765)."),
    ] = None,
    workspace: WorkspaceOpt = None,
    no_memory: Annotated[
        bool, typer.Option("--no-memory", help="Neither recall nor store memories.")
    ] = False,
) -> None:
    """Serve the agent on this machine: an OpenAI-compatible API at /v1, Lar's API at /api
    (documented at /docs), health at /health and the web panel at /.

    Listens on 127.0.0.1 only, unless --host (or server.host) names another address (then
    server.token: ${LAR_TOKEN} must be set in config.yaml). Every request carries the token:
    server.token, else a random one Lar keeps in $LAR_HOME/server.token (mode 0600; the CLI
    reads it there, the panel link printed at start carries it). Runs work in this folder (or
    --workspace) and in server.workspaces only; server.approvals (wait, deny, allow) is the
    owner's, a request may ask for less. Tools that need confirmation wait for an answer in
    the panel or at /api/approvals; none within server.approval_timeout_s is a no.
    """
    from lar.config import load_config
    from lar.registry import load_plugins
    from lar.server import serve as run_server
    from lar.server import server_token

    try:
        load_plugins()
        config = load_config()
        changes = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
        if changes:
            config = config.model_copy(update={"server": config.server.model_copy(update=changes)})

        token = server_token(config)  # an empty LAR_TOKEN is an error here, not per request
        where = "server.token" if config.server.token else str(config.home / "server.token")

        def ready(url: str) -> None:
            console_err().print(
                f"lar serves on {url}: every request needs its token (from {where}; the CLI "
                f"reads it there). Panel: {url}/#token={token} — OpenAI API {url}/v1 "
                f"(api_key: the token), docs {url}/docs. Ctrl-C stops it."
            )

        console_err().print("loading the model…")
        run_server(config, memory=not no_memory, workspace=workspace, on_ready=ready)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None
