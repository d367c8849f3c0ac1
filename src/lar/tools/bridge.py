"""A sandboxed program's line to Lar (lar.tools.sandbox): a pair of pipes, no network and no
shared files. The program writes one JSON request a line to one pipe and reads each answer on
the other; ``serve`` answers them in Lar's process (CodeAct's tool calls, lar.agents.codeact)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Bridge", "BRIDGE_ENV", "MAX_BRIDGE_LINE", "bridge_pipes", "serve"]

Bridge = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers a sandboxed program's requests (one JSON object a line) to the process outside."""
BRIDGE_ENV = "LAR_BRIDGE_FDS"
"""In a sandbox with a bridge: "W,R", the descriptors to write a request line to and to read
its answer from."""
MAX_BRIDGE_LINE = 1 << 20


def bridge_pipes() -> tuple[int, int, int, int]:
    """(read requests, the child's request end, the child's answer end, write answers)."""
    requests_r, requests_w = os.pipe()
    answers_r, answers_w = os.pipe()
    return requests_r, requests_w, answers_r, answers_w


async def serve(requests_fd: int, answers_fd: int, bridge: Bridge) -> None:
    """Answer each request line until the program closes its end (or the run ends)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_BRIDGE_LINE)
    requests = os.fdopen(requests_fd, "rb", buffering=0)
    answers = os.fdopen(answers_fd, "wb", buffering=0)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), requests
    )
    try:
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # a line over the limit
                answer: dict[str, Any] = {"ok": False, "error": "request too long"}
                line = b"-"
            else:
                if not line:
                    return
                try:
                    request = json.loads(line)
                    if not isinstance(request, dict):
                        raise ValueError("not an object")
                except ValueError as exc:
                    answer = {"ok": False, "error": f"not a JSON request: {exc}"}
                else:
                    answer = await bridge(request)
            data = (json.dumps(answer, default=str) + "\n").encode()
            await asyncio.to_thread(_write_all, answers, data)
    except (BrokenPipeError, ConnectionResetError):
        return  # the program ended without reading its answer
    finally:
        transport.close()
        answers.close()


def _write_all(f: Any, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[f.write(view) :]
