"""Approvals over HTTP (T9): approve → the call runs; deny → the model is told; silence → denied."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.conftest import call

pytestmark = pytest.mark.anyio

WRITE = call("file_write", path="note.txt", content="hello from the server")


async def _pending(client: httpx.AsyncClient) -> dict[str, Any]:
    for _ in range(200):  # bounded: 10 s
        found = (await client.get("/api/approvals")).json()["approvals"]
        if found:
            return found[0]  # type: ignore[no-any-return]
        await asyncio.sleep(0.05)
    raise AssertionError("no approval appeared")


async def _ask(client: httpx.AsyncClient) -> asyncio.Task[httpx.Response]:
    body = {"messages": [{"role": "user", "content": "Write hello to note.txt"}]}
    return asyncio.create_task(client.post("/v1/chat/completions", json=body))


async def test_approve_runs_the_call(make_client: Any, tmp_path: Path) -> None:
    client, hub, engine = await make_client([WRITE, "Written."])
    reply = await _ask(client)
    approval = await _pending(client)
    assert approval["tool"] == "file_write"
    assert approval["arguments"] == {"path": "note.txt", "content": "hello from the server"}
    run = hub.runs[approval["run"]]
    assert run.status == "waiting_user"
    assert hub.tasks.get(run.id).status == "waiting_user"
    assert any(e["type"] == "waiting_user" for e in run.events)  # the stream says it waits
    answered = await client.post(f"/api/approvals/{approval['id']}", json={"approve": True})
    assert answered.json()["decision"] == "approved"
    r = await reply
    assert r.status_code == 200
    assert (tmp_path / "ws" / "note.txt").read_text() == "hello from the server"
    again = await client.post(f"/api/approvals/{approval['id']}", json={"approve": False})
    assert again.status_code == 409


async def test_deny_tells_the_model_and_writes_nothing(make_client: Any, tmp_path: Path) -> None:
    client, hub, engine = await make_client([WRITE, "I could not write it."])
    reply = await _ask(client)
    approval = await _pending(client)
    await client.post(f"/api/approvals/{approval['id']}", json={"approve": False})
    r = await reply
    assert r.status_code == 200
    assert not (tmp_path / "ws" / "note.txt").exists()
    content = r.json()["choices"][0]["message"]["content"]
    assert "> ✗ file_write" in content
    # refused_call: the run ends on Lar's account of the refusal, with no reply after it
    assert "file_write was not run: it needs your permission" in content
    assert len(engine.calls) == 1


async def test_no_answer_in_time_is_a_no(make_client: Any, tmp_path: Path) -> None:
    config = "server:\n  approval_timeout_s: 0.3\n"
    client, hub, engine = await make_client([WRITE, "Not written."], config_text=config)
    r = await (await _ask(client))
    assert r.status_code == 200
    assert not (tmp_path / "ws" / "note.txt").exists()
    (run,) = hub.runs.values()
    decided = [e for e in run.events if e["type"] == "approval"]
    assert decided and decided[0]["decision"] == "timeout"
    content = r.json()["choices"][0]["message"]["content"]
    assert "file_write was not run: it needs your permission" in content
    assert len(engine.calls) == 1
    assert (await client.get("/api/approvals")).json()["approvals"] == []


async def test_a_dangerous_command_carries_its_warning(make_client: Any) -> None:
    client, hub, engine = await make_client([call("shell", command="rm -rf build"), "ok"])
    reply = await _ask(client)
    approval = await _pending(client)
    assert approval["tool"] == "shell"
    assert approval["reasons"], approval  # the danger check said why it asks
    await client.post(f"/api/approvals/{approval['id']}", json={"approve": False})
    await reply


async def test_unknown_approval_is_404(make_client: Any) -> None:
    client, hub, engine = await make_client([])
    r = await client.post("/api/approvals/a_nothing", json={"approve": True})
    assert r.status_code == 404
