"""Starting the server: the bind check, the model loaded before the first request, uvicorn."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.errors import ConfigError
from lar.server.security import is_loopback

if TYPE_CHECKING:
    from lar.config import LarConfig
    from lar.engines import Engine

__all__ = ["serve", "ServeError", "check_bind", "build_app"]


class ServeError(ConfigError):
    """The server cannot start as configured (exit 2)."""


def check_bind(host: str, token: str | None) -> None:
    """Anything but loopback needs a token: an agent that runs code is not for the network."""
    if not is_loopback(host) and not token:
        raise ServeError(
            f"refusing to listen on {host}: any address but loopback (127.0.0.1) needs a "
            "token, or anyone who reaches this machine could run code on it. Set "
            "server.token: ${LAR_TOKEN} in config.yaml and export LAR_TOKEN, or bind 127.0.0.1"
        )


def build_app(
    config: LarConfig,
    *,
    engine: Engine | None = None,
    memory: bool = True,
    workspace: str | Path | None = None,
    preload: bool = True,
) -> Any:
    """The guarded app for ``config.server`` (host, port, token …)."""
    from lar.server.app import create_app
    from lar.server.hub import Hub

    settings = config.server
    check_bind(settings.host, settings.token.get_secret_value() if settings.token else None)
    hub = Hub(config, engine=engine, memory=memory, workspace=workspace)
    host = settings.host if ":" not in settings.host else f"[{settings.host}]"
    return create_app(hub, self_url=f"http://{host}:{settings.port}", preload=preload)


def serve(
    config: LarConfig,
    *,
    engine: Engine | None = None,
    memory: bool = True,
    workspace: str | Path | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until stopped (Ctrl-C or SIGTERM end it cleanly)."""
    import uvicorn

    app = build_app(config, engine=engine, memory=memory, workspace=workspace)
    settings = config.server
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
    )
    found = config.home / "server.json"
    unspecified = settings.host in ("0.0.0.0", "::", "")
    local = "127.0.0.1" if unspecified else settings.host
    local = f"[{local}]" if ":" in local else local

    def ready(url: str) -> None:
        # How `lar run` and `lar chat` find this server (lar.cli.remote); removed on exit.
        info = {"url": f"http://{local}:{settings.port}", "pid": os.getpid()}
        config.home.mkdir(parents=True, exist_ok=True)
        found.write_text(json.dumps(info), encoding="utf-8")
        if on_ready is not None:
            on_ready(url)

    def stop() -> None:
        # In the app's shutdown: after it, uvicorn re-raises the SIGTERM it caught.
        try:
            if json.loads(found.read_text(encoding="utf-8")).get("pid") == os.getpid():
                found.unlink()
        except (OSError, ValueError):
            pass

    app.fastapi.state.on_ready = ready
    app.fastapi.state.on_stop = stop
    server.run()
