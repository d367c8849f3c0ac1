"""Attacks on ``lar serve`` as a hostile local user would make them: loopback is no boundary,
so every request needs the server's token, and a request never chooses more than the server's
owner allowed (all calls approved, or a folder of its choice to work in)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server._process import auth, lar_serve
from tests.server.conftest import call

from lar.config import load_config
from lar.server import server_token
from lar.testing import MockOpenAIServer, text_reply

pytestmark = pytest.mark.anyio


async def test_a_server_without_a_configured_token_refuses_requests_without_its_own(
    make_client: Any, lar_home: Path
) -> None:
    client, hub, engine = await make_client([call("shell", command="id"), "done"], headers={})
    for headers in ({}, {"Authorization": "Bearer anything"}, {"Authorization": "Basic eDp4"}):
        status = await client.get("/api/status", headers=headers)
        assert status.status_code == 401, headers
        run = await client.post("/api/runs", json={"text": "run id"}, headers=headers)
        assert run.status_code == 401, headers
        approve = await client.post("/api/approvals/a_1", json={"approve": True}, headers=headers)
        assert approve.status_code == 401, headers
    assert engine.calls == []
    token = (lar_home / "server.token").read_text().strip()
    ok = await client.get("/api/status", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200


def test_the_stored_token_is_private_to_its_user_and_stays_the_same(lar_home: Path) -> None:
    config = load_config()
    assert server_token(config, create=False) is None
    first = server_token(config)
    assert first is not None and len(first) >= 32
    path = lar_home / "server.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert server_token(load_config()) == first
    path.chmod(0o644)  # loosened by hand: tightened again before it is used
    assert server_token(load_config()) == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_empty_or_unusable_token_file_is_named_not_a_crash(lar_home: Path) -> None:
    from lar.errors import ConfigError

    (lar_home / "server.token").write_text("\n")
    with pytest.raises(ConfigError, match="server.token: holds no usable token"):
        server_token(load_config())


def test_an_empty_lar_token_is_a_clear_error_at_start(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text("server:\n  token: ${LAR_TOKEN}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "lar", "serve"],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(lar_home), "PATH": "/usr/bin:/bin", "LAR_TOKEN": ""},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "server.token is empty" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_a_request_cannot_allow_every_call_for_itself(make_client: Any) -> None:
    client, hub, engine = await make_client([call("shell", command="id"), "done"])
    r = await client.post("/api/runs", json={"text": "run id", "approvals": "allow"})
    assert r.status_code == 403
    assert "server.approvals" in r.json()["error"]["message"]
    assert engine.calls == []
    # asking for less than the owner set is fine
    denied = await client.post("/api/runs", json={"text": "run id", "approvals": "deny"})
    assert denied.status_code == 202


async def test_the_owner_may_allow_every_call(make_client: Any) -> None:
    client, hub, engine = await make_client(
        [call("file_write", path="a.txt", content="x"), "done"],
        config_text="server:\n  approvals: allow\n",
    )
    r = await client.post("/api/runs", json={"text": "write a.txt"})
    assert r.status_code == 202
    await hub.runs[r.json()["id"]].task  # type: ignore[misc]
    assert hub.approvals.pending() == []
    assert (Path(str(hub.workspace)) / "a.txt").read_text() == "x"


async def test_a_request_cannot_pick_a_folder_outside_the_servers_workspaces(
    make_client: Any, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "victim-home"
    elsewhere.mkdir()
    client, hub, engine = await make_client([call("file_write", path=".profile", content="x")])
    for folder in (elsewhere, tmp_path, Path("/")):
        r = await client.post("/api/runs", json={"text": "write", "workspace": str(folder)})
        assert r.status_code == 403, folder
        assert "server.workspaces" in r.json()["error"]["message"]
    # a link inside the workspace that points out of it is judged by where it points
    link = Path(str(hub.workspace)) / "out"
    link.symlink_to(elsewhere)
    r = await client.post("/api/runs", json={"text": "write", "workspace": str(link)})
    assert r.status_code == 403
    assert engine.calls == []
    assert not (elsewhere / ".profile").exists()


async def test_a_folder_the_owner_listed_is_accepted(make_client: Any, tmp_path: Path) -> None:
    listed = tmp_path / "projects"
    (listed / "one").mkdir(parents=True)
    client, hub, engine = await make_client(
        ["fine"], config_text=f"server:\n  workspaces: [{listed}]\n"
    )
    inside = await client.post("/api/runs", json={"text": "hi", "workspace": str(listed / "one")})
    assert inside.status_code == 202
    own = await client.post("/api/runs", json={"text": "hi", "workspace": str(hub.workspace)})
    assert own.status_code == 202


_PROBE = """
import encodings.idna, http.client, json, os, sys
port = int(sys.argv[1]); token_file = sys.argv[2]
os.setgid(65534); os.setuid(65534)
try:
    open(token_file).read(); read = "read"
except OSError as exc:
    read = type(exc).__name__
out = {"token_file": read}
for name, headers in (("none", {}), ("any", {"Authorization": "Bearer local"})):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"text": "run id", "approvals": "allow", "workspace": "/"})
    c.request("POST", "/api/runs", body, {"Content-Type": "application/json", **headers})
    out[name] = c.getresponse().status
print(json.dumps(out))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to a second uid needs root")
def test_another_local_user_without_the_token_is_refused(lar_home: Path, tmp_path: Path) -> None:
    with MockOpenAIServer([text_reply("never")]) as mock:
        (lar_home / "config.yaml").write_text(
            "model: mock\nmodels:\n  - name: mock\n    engine: openai\n"
            f"    base_url: {mock.url}\n    retries: 0\n"
        )
        with lar_serve(lar_home, cwd=tmp_path) as url:
            port = url.rsplit(":", 1)[1]
            probe = subprocess.run(
                [sys.executable, "-c", _PROBE, port, str(lar_home / "server.token")],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert probe.returncode == 0, probe.stderr
            seen = json.loads(probe.stdout)
            assert seen == {"token_file": "PermissionError", "none": 401, "any": 401}
            runs = httpx.get(f"{url}/api/runs", headers=auth(lar_home), timeout=10).json()
            assert runs["runs"] == []
        assert mock.requests == []
