"""A server on a scripted engine, reached in process (httpx's ASGI transport) or on loopback."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from lar.config import load_config
from lar.engines.scripted import ScriptedEngine
from lar.server import Hub, create_app, server_token


def call(name: str, **args: object) -> str:
    """A scripted reply that calls ``name`` (the protocol track's text form)."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"


Make = Callable[..., Any]


@pytest.fixture
async def make_client(lar_home: Path, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await make_client(steps, config_text=..., headers=...)`` → (client, hub, engine);
    ``engine=False`` runs the configured models instead of the scripted engine."""
    hubs: list[Hub] = []
    clients: list[httpx.AsyncClient] = []

    async def make(
        steps: list[Any],
        *,
        config_text: str = "",
        headers: dict[str, str] | None = None,
        memory: bool = False,
        engine: bool = True,
    ) -> tuple[httpx.AsyncClient, Hub, ScriptedEngine]:
        if config_text:
            (lar_home / "config.yaml").write_text(config_text)
        config = load_config()
        scripted = ScriptedEngine(steps)
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        fixed = scripted if engine else None  # False: the configured models' engines
        hub = Hub(config, engine=fixed, memory=memory, workspace=workspace)
        app = create_app(hub, probe_on_start=False)
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://127.0.0.1:8765",
            headers=headers
            if headers is not None
            else {"Authorization": f"Bearer {server_token(config)}"},
            timeout=30,
        )
        hubs.append(hub)
        clients.append(client)
        return client, hub, scripted

    yield make
    for client in clients:
        await client.aclose()
    for hub in hubs:
        await hub.aclose()
