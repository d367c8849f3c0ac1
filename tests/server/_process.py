"""``lar serve`` as a user starts it: a real subprocess on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


def token_of(home: Path) -> str:
    """The token ``lar serve`` made for ``home`` on its first start."""
    return (home / "server.token").read_text(encoding="ascii").strip()


def auth(home: Path) -> dict[str, str]:
    return {"Authorization": f"Bearer {token_of(home)}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def lar_serve(
    home: Path,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    wait_s: float = 120.0,
) -> Iterator[str]:
    """Start ``lar serve`` and yield its URL once /health/live answers; stopped with SIGTERM."""
    port = free_port()
    full_env = {
        "LAR_HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        **(env or {}),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "lar", "serve", "--port", str(port), *args],
        env=full_env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while True:
            if proc.poll() is not None:
                said = proc.stdout.read() if proc.stdout else ""
                raise AssertionError(f"lar serve exited {proc.returncode}: {said}")
            try:
                if httpx.get(f"{url}/health/live", timeout=1.0).status_code in (200, 401):
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("lar serve did not start in time")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def ask_streaming(client: Any, text: str) -> tuple[str, Any]:
    """A streamed chat completion by the ``openai`` package: the whole text and the usage."""
    stream = client.chat.completions.create(
        model="lar",
        messages=[{"role": "user", "content": text}],
        stream=True,
        stream_options={"include_usage": True},
    )
    parts, usage = [], None
    for chunk in stream:
        if chunk.choices:
            parts.append(chunk.choices[0].delta.content or "")
        if chunk.usage is not None:
            usage = chunk.usage
    return "".join(parts), usage
