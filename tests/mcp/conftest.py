"""The MCP reference servers the tests run: mcp-server-time (PyPI, stdio; the dev extra) and
@modelcontextprotocol/server-everything (npm, Streamable HTTP; installed by install.sh into
.venv/mcp-servers)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _ports import free_port

EVERYTHING = (
    Path(sys.prefix)
    / "mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


@pytest.fixture
def everything_url() -> Iterator[str]:
    if not EVERYTHING.is_file():
        if os.environ.get("CI"):
            raise pytest.UsageError(f"CI must run the MCP tests: {EVERYTHING} is missing")
        pytest.skip(f"the MCP reference server is not installed at {EVERYTHING} (install.sh)")
    port = free_port()
    proc = subprocess.Popen(
        ["node", str(EVERYTHING), "streamableHttp"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError(
                    f"server-everything exited: {proc.stderr.read() if proc.stderr else ''}"
                )
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()
