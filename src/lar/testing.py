"""Test helpers that ship with Lar: a loopback OpenAI-compatible server that replays a script.

    with MockOpenAIServer([tool_call_reply("add", {"a": 1, "b": 2}), text_reply("3")]) as srv:
        Agent(tools=[add], base_url=srv.url, model="mock").run("1 + 2?")

Each scripted item is a reply body (dict), an ``(http_status, body)`` pair, or a callable taking
the request body. Streaming requests get the same reply as Server-Sent Events. The server binds
127.0.0.1 only.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MockOpenAIServer", "text_reply", "tool_call_reply", "adding_reply"]

Reply = dict[str, Any] | tuple[int, Any] | Callable[[dict[str, Any]], Any]


def text_reply(
    content: str, *, prompt_tokens: int = 10, completion_tokens: int = 5
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "model": "mock",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def tool_call_reply(
    name: str, arguments: dict[str, Any] | str, call_id: str = "call_1"
) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        ],
    }
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "model": "mock",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def _sse_events(reply: dict[str, Any]) -> list[dict[str, Any]]:
    choice = reply["choices"][0]
    msg = choice["message"]
    base = {"id": reply.get("id"), "object": "chat.completion.chunk", "model": reply.get("model")}
    events: list[dict[str, Any]] = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    ]
    content = msg.get("content") or ""
    for i in range(0, len(content), 8):
        events.append({**base, "choices": [{"index": 0, "delta": {"content": content[i : i + 8]}}]})
    for idx, tc in enumerate(msg.get("tool_calls") or []):
        fn = tc["function"]
        head = {
            "index": idx,
            "id": tc["id"],
            "type": "function",
            "function": {"name": fn["name"], "arguments": ""},
        }
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
        args = fn["arguments"]
        for i in range(0, len(args), 10):
            part = {"index": idx, "function": {"arguments": args[i : i + 10]}}
            events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [part]}}]})
    events.append(
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}],
        }
    )
    if reply.get("usage"):
        events.append({**base, "choices": [], "usage": reply["usage"]})
    return events


_ADD = re.compile(r"add (\d+) and (\d+)")


def adding_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A model that is a pure function of the request (batch tests and benchmarks): "add A and
    B" → a ``calculate`` call, then "the sum is <its result>"; anything else → "echo: " and the
    request reversed."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        return text_reply(f"the sum is {last['content']}")
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    found = _ADD.search(user)
    if found:
        return tool_call_reply("calculate", {"expression": f"{found[1]} + {found[2]}"})
    return text_reply("echo: " + user[::-1])


class MockOpenAIServer:
    """A scripted ``/v1/chat/completions`` on 127.0.0.1; ``repeat_last`` replays the last reply."""

    def __init__(
        self, script: Sequence[Reply], *, repeat_last: bool = False, api_key: str | None = None
    ):
        self.script = list(script)
        self.repeat_last = repeat_last
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def _next(self, body: dict[str, Any]) -> tuple[int, Any]:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
        if index >= len(self.script):
            if not (self.repeat_last and self.script):
                return 500, {"error": {"message": f"mock script exhausted at request {index + 1}"}}
            index = len(self.script) - 1
        item = self.script[index]
        if callable(item):
            item = item(body)
        if isinstance(item, tuple):
            return item
        return 200, item

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes; without this, Nagle's algorithm
                # meets delayed ACKs and every response waits ~40 ms.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, payload: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    # Like OpenAI: no /tokenize and the like (Lar then estimates tokens).
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                server.headers.append(dict(self.headers))
                if (
                    server.api_key
                    and self.headers.get("Authorization") != f"Bearer {server.api_key}"
                ):
                    self._send(401, b'{"error": {"message": "invalid api key"}}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, b'{"error": {"message": "invalid JSON"}}')
                    return
                status, reply = server._next(body)
                if isinstance(reply, bytes | str):
                    payload = reply.encode() if isinstance(reply, str) else reply
                    self._send(status, payload)
                    return
                if status != 200 or not body.get("stream"):
                    self._send(status, json.dumps(reply).encode())
                    return
                chunks = b"".join(
                    b"data: " + json.dumps(e).encode() + b"\n\n" for e in _sse_events(reply)
                )
                self._send(200, chunks + b"data: [DONE]\n\n", "text/event-stream")

        return Handler

    def start(self) -> MockOpenAIServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> MockOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
