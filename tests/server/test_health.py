"""Health (D10): liveness, readiness with its reasons, capability probes that hide tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from lar.testing import MockOpenAIServer

pytestmark = pytest.mark.anyio


async def test_ready_turns_503_with_the_reason_when_the_engine_endpoint_stops(
    make_client: Any, lar_home: Path
) -> None:
    mock = MockOpenAIServer([])
    mock.__enter__()
    try:
        config = (
            "model: remote\nmodels:\n  - name: remote\n    engine: openai\n"
            f"    base_url: {mock.url}\n    retries: 0\n"
        )
        client, hub, engine = await make_client([], config_text=config, engine=False)
        assert (await client.get("/health/live")).json() == {"status": "ok"}
        up = await client.get("/health/ready")
        assert up.status_code == 200, up.text
        assert up.json() == {"status": "ready", "problems": []}
    finally:
        mock.__exit__(None, None, None)
    down = await client.get("/health/ready")
    assert down.status_code == 503
    (problem,) = down.json()["problems"]
    assert problem.startswith("engine remote: cannot reach http://127.0.0.1:")
    caps = (await client.get("/health/capabilities", params={"fresh": True})).json()
    engines = [c for c in caps["capabilities"] if c["name"] == "engine remote"]
    assert engines and engines[0]["status"] == "UNAVAILABLE"


async def test_a_failing_capability_is_unavailable_and_its_tools_are_not_offered(
    make_client: Any,
) -> None:
    client, hub, engine = await make_client(["Fine."])

    async def broken() -> str:
        raise RuntimeError("bwrap: cannot create a user namespace")

    health = client._transport.app.fastapi.state.health  # type: ignore[attr-defined]
    health.capabilities["sandbox"].probe = broken
    caps = (await client.get("/health/capabilities", params={"fresh": True})).json()
    sandbox = next(c for c in caps["capabilities"] if c["name"] == "sandbox")
    assert sandbox["status"] == "UNAVAILABLE"
    assert "user namespace" in sandbox["detail"]
    assert sandbox["tools"] == ["code_run", "shell"]
    memory = next(c for c in caps["capabilities"] if c["name"] == "memory recall")
    assert memory["status"] == "UNAVAILABLE" and memory["fallback"]  # memory is off here
    r = await client.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": "run ls"}]}
    )
    assert r.status_code == 200
    system = engine.calls[0][0].content
    head, notice = system.split("Not available now:")
    notice, listing = notice.split("\n", 1)
    assert "code_run: sandbox is unavailable (bwrap" in notice  # the model is told why
    assert "file_read" in listing
    assert "code_run" not in listing and "shell" not in listing
    # the probe works again: the tools come back
    del health.capabilities["sandbox"].probe

    async def fine() -> str:
        return "ok"

    health.capabilities["sandbox"].probe = fine
    await client.get("/health/capabilities", params={"fresh": True})
    assert "code_run" not in hub.hidden


async def test_hiding_tools_never_widens_the_configured_allowlist(make_client: Any) -> None:
    config = "tools:\n  allowlist: [calculate, code_run]\n"
    client, hub, engine = await make_client(["Fine."], config_text=config)

    async def broken() -> str:
        raise RuntimeError("bwrap: cannot create a user namespace")

    health = client._transport.app.fastapi.state.health  # type: ignore[attr-defined]
    health.capabilities["sandbox"].probe = broken
    await client.get("/health/capabilities", params={"fresh": True})
    r = await client.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": "2+2?"}]}
    )
    assert r.status_code == 200
    listing = engine.calls[0][0].content.split("Not available now:")[1].split("\n", 1)[1]
    assert "calculate" in listing
    assert "code_run" not in listing and "file_read" not in listing


def test_the_probes_at_start_find_every_capability_working_and_hide_no_tool(
    lar_home: Path, tmp_path: Path
) -> None:
    """The probes a started server runs before it listens: the web probe once fetched this
    server's own address then, was refused every time, and web_scan was hidden from every
    session (the model told it was unavailable) until a later probe."""
    from tests.server._thread import ServerThread

    from lar.config import load_config
    from lar.engines.scripted import ScriptedEngine
    from lar.server import Hub, create_app, server_token

    config = load_config()
    engine = ScriptedEngine(["Fine."])
    hub = Hub(config, engine=engine, memory=False, workspace=tmp_path)
    with ServerThread(create_app(hub)) as srv:
        headers = {"Authorization": f"Bearer {server_token(config)}"}
        caps = httpx.get(f"{srv.url}/health/capabilities", headers=headers, timeout=30).json()
        status = {c["name"]: c["status"] for c in caps["capabilities"]}
        assert status["web"] == "OK", caps
        assert status["sandbox"] == "OK", caps
        assert set(hub.hidden) <= {"memory_search"}, hub.hidden  # memory is off here
        r = httpx.post(
            f"{srv.url}/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers=headers,
            timeout=30,
        )
        assert r.status_code == 200, r.text
    system = engine.calls[0][0].content
    assert "web_scan" in system
    assert "web_scan:" not in system.split("Not available now:")[-1]
