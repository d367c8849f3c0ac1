"""What guards the server: bind rules, the token, CSRF, host names, body size, static paths and
secrets kept out of every response."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lar.server.start import ServeError, check_bind

pytestmark = pytest.mark.anyio

TOKEN = "tok-7d1c9a0e5b3f4e21"
WITH_TOKEN = f"server:\n  token: {TOKEN}\n"


def test_a_non_loopback_bind_without_a_token_refuses_to_start(lar_home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lar", "serve", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(lar_home), "PATH": "/usr/bin:/bin"},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "refusing to listen on 0.0.0.0" in proc.stderr
    assert "server.token" in proc.stderr


def test_bind_rules() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_bind(host, None)
    check_bind("0.0.0.0", TOKEN)
    for host in ("0.0.0.0", "192.168.1.5", "::"):
        with pytest.raises(ServeError):
            check_bind(host, None)
        with pytest.raises(ServeError):
            check_bind(host, "")


async def test_every_request_needs_the_token(make_client: Any) -> None:
    client, hub, engine = await make_client(["hi"], config_text=WITH_TOKEN, headers={})
    for path in (
        "/v1/models",
        "/api/runs",
        "/api/status",
        "/health/ready",
        "/docs",
        "/openapi.json",
    ):
        r = await client.get(path)
        assert r.status_code == 401, path
        assert r.headers["www-authenticate"] == "Bearer"
        wrong = await client.get(path, headers={"Authorization": "Bearer tok-wrong"})
        assert wrong.status_code == 401, path
    ok = await client.get("/v1/models", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
    # the panel's own files load (no data), so that it can ask for the token
    assert (await client.get("/")).status_code == 200


async def test_the_panel_signs_in_with_the_token_and_needs_csrf(make_client: Any) -> None:
    client, hub, engine = await make_client([], config_text=WITH_TOKEN, headers={})
    page = await client.get("/")
    csrf = page.cookies["lar_csrf"]
    assert (
        await client.post("/auth", json={"token": "nope"}, headers={"X-CSRF-Token": csrf})
    ).status_code == 401
    signed = await client.post("/auth", json={"token": TOKEN}, headers={"X-CSRF-Token": csrf})
    assert signed.status_code == 200
    assert TOKEN not in signed.headers.get("set-cookie", "")
    assert (await client.get("/api/status")).status_code == 200  # the session cookie
    # a state-changing request without the CSRF header is refused, with it it goes through
    no_csrf = await client.post("/api/approvals/a_x", json={"approve": True})
    assert no_csrf.status_code == 403
    assert "CSRF" in no_csrf.json()["error"]["message"]
    wrong = await client.post(
        "/api/approvals/a_x", json={"approve": True}, headers={"X-CSRF-Token": "forged"}
    )
    assert wrong.status_code == 403
    right = await client.post(
        "/api/approvals/a_x", json={"approve": True}, headers={"X-CSRF-Token": csrf}
    )
    assert right.status_code == 404  # past the guard: there is no such approval


async def test_other_host_names_are_refused(make_client: Any) -> None:
    client, hub, engine = await make_client([])
    r = await client.get("/v1/models", headers={"Host": "attacker.example:8765"})
    assert r.status_code == 421
    assert (await client.get("/v1/models", headers={"Host": "localhost:8765"})).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/panel/../app.py",
        "/panel/%2e%2e/app.py",
        "/panel/..%2fapp.py",
        "/panel/%2e%2e/%2e%2e/config.py",
    ],
)
async def test_static_path_traversal_is_404(make_client: Any, path: str) -> None:
    client, hub, engine = await make_client([])
    r = await client.get(path)
    assert r.status_code == 404, (path, r.text[:200])
    assert "create_app" not in r.text


async def test_an_oversized_body_is_413(make_client: Any) -> None:
    client, hub, engine = await make_client([], config_text="server:\n  max_body_kb: 4\n")
    big = "x" * 10_000
    r = await client.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": big}]}
    )
    assert r.status_code == 413

    async def chunks() -> Any:  # no Content-Length: counted while read
        for _ in range(10):
            yield b"x" * 1000

    streamed = await client.post(
        "/v1/chat/completions", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert engine.calls == []


async def test_no_secret_in_any_response(make_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-live-5f2e8c1d9a7b6e4f"
    monkeypatch.setenv("SHOP_API_KEY", key)
    config = (
        f"server:\n  token: {TOKEN}\n"
        "models:\n  - name: remote\n    engine: openai\n    base_url: http://127.0.0.1:9/v1\n"
        f"    api_key: {key}\n"
    )
    steps = [f"Your key is {key} and {TOKEN}."]
    client, hub, engine = await make_client(
        steps, config_text=config, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    bodies = []
    chat = await client.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": f"use {key}"}]}
    )
    bodies.append(chat.text)
    run = chat.headers["x-lar-run"]
    for path in (
        "/v1/models",
        "/api/runs",
        f"/api/runs/{run}",
        f"/api/runs/{run}/events",
        "/api/models",
        "/api/status",
        "/api/tasks",
        "/health/live",
        "/health/ready",
        "/openapi.json",
    ):
        r = await client.get(path)
        assert r.status_code in (200, 503), (path, r.status_code)
        bodies.append(r.text)
    for text in bodies:
        assert key not in text and TOKEN not in text
    assert "Your key is" in chat.text  # the answer itself came back, masked


async def test_cors_is_off_unless_configured(make_client: Any) -> None:
    client, hub, engine = await make_client([])
    pre = await client.options(
        "/v1/chat/completions",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in pre.headers
    config = "server:\n  cors_origins: ['https://app.example']\n"
    client2, _, _ = await make_client([], config_text=config)
    ok = await client2.options(
        "/v1/chat/completions",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
    )
    assert ok.headers.get("access-control-allow-origin") == "https://app.example"
