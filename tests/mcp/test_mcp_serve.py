"""`lar mcp serve`, listed and called by the official SDK's client: a Lar tool runs, memory
search returns a stored memory, a tool that asks first is annotated and not run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
from _ports import free_port

from lar.config import load_config
from lar.memory import open_memory
from mcp import Client, StdioServerParameters


def test_lar_mcp_serve_over_stdio(lar_home: Path, tmp_path: Path) -> None:
    memory = open_memory(load_config())
    stored = memory.write("My sister Ana lives in Braga", "fact", source="user")
    assert stored.action == "stored"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lar", "mcp", "serve"],
        env={"LAR_HOME": str(lar_home)},
        cwd=workspace,
    )

    async def session() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"calculate", "file_write", "lar_memory_search", "lar_memory_add"} <= set(tools)
            assert "ask_user" not in tools  # nobody to ask
            write = tools["file_write"]
            assert write.annotations is not None and write.annotations.destructive_hint
            assert write.meta == {"lar/permission": "confirm", "lar/allowed": False}
            assert tools["calculate"].meta == {"lar/permission": "auto", "lar/allowed": False}

            done = await client.call_tool("calculate", {"expression": "6 * 7"})
            assert not done.is_error and done.content[0].text == "6 * 7 = 42"  # type: ignore[union-attr]

            found = await client.call_tool("lar_memory_search", {"query": "where does Ana live"})
            assert f"My sister Ana lives in Braga ({stored.memory_id})" in found.content[0].text  # type: ignore[union-attr]

            refused = await client.call_tool("file_write", {"path": "x.txt", "content": "hi"})
            assert refused.is_error
            assert "asks Lar's user first and was not run" in refused.content[0].text  # type: ignore[union-attr]

            bad = await client.call_tool("calculate", {"expr": "1"})
            assert bad.is_error and "expression" in bad.content[0].text  # type: ignore[union-attr]

    anyio.run(session)
    assert not (workspace / "x.txt").exists()


def test_an_allowed_tool_runs_and_http_binds_loopback(lar_home: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lar",
            "mcp",
            "serve",
            "--http",
            "--port",
            str(port),
            "--allow",
            "file_write",
        ],
        env={**os.environ, "LAR_HOME": str(lar_home)},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, "lar mcp serve --http exited"
            time.sleep(0.1)

        async def session() -> None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            token = (lar_home / "server.token").read_text().strip()  # made at its start
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                create_mcp_http_client(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert tools["file_write"].meta["lar/allowed"] is True  # type: ignore[index]
                done = await client.call_tool("file_write", {"path": "x.txt", "content": "hi"})
                assert not done.is_error, done

        anyio.run(session)
        assert (tmp_path / "x.txt").read_text() == "hi"
        listening = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        assert f"127.0.0.1:{port}" in listening and f"0.0.0.0:{port}" not in listening
    finally:
        proc.terminate()
        proc.wait(10)
