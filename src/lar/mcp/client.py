"""MCP servers' tools as Lar tools (I5), with the official SDK's ``Client``.

Each configured server (``mcp:`` in config.yaml: ``command``/``args``/``env`` for stdio, ``url``/
``headers`` for Streamable HTTP) gets one connection, held open by a thread of its own with its
own event loop, so a run's loop (whichever it is: ``Agent.run``'s, the server's) never waits on a
server's streams. Its tools become ``SchemaTool``s named ``<server>__<tool>`` — ``__`` because
native tool-calling APIs allow only letters, digits, ``_`` and ``-`` in a name — under the
server's ``permission`` (default ``confirm``: a server is code from outside), through the same
executor as every tool: allowlist, validation against the server's JSON Schema, timeout,
breaker, clipping. A server's annotations (read-only hints) are its own claims and change no
permission. Descriptions are cut to ``MAX_DESCRIPTION`` characters: the prompt is ours.

A server that crashes or hangs: the call fails with what happened and that the server is being
restarted; its tools fail at once (no waiting) while it is down; it is restarted with backoff
(1 s, 2 s, 4 s … at most 60 s). A call never waits longer than the server's ``timeout_s`` (the
executor's timeout); a call cut off so restarts the server (a hung server does not answer the
next one either).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TextIO

from lar.calling.prompt import MCP_SEPARATOR
from lar.config import McpServerSettings
from lar.errors import LarError
from lar.tools.base import SchemaTool, Tool

__all__ = ["McpServer", "McpServers", "McpError", "SEPARATOR", "MAX_DESCRIPTION"]

SEPARATOR = MCP_SEPARATOR
MAX_DESCRIPTION = 300
START_TIMEOUT_S = 30.0
MAX_BACKOFF_S = 60.0
_SERVER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,30}$")


class McpError(LarError):
    """A configured MCP server Lar cannot use; the message names the server."""


def _text_of(result: Any) -> str:
    """A ``CallToolResult`` as text: its text blocks (others named by type), else its
    structured content as JSON."""
    parts = []
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    if not any(isinstance(getattr(b, "text", None), str) for b in result.content or []):
        structured = getattr(result, "structured_content", None)
        if structured is not None:
            return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)


class McpServer:
    """One server's connection, on a thread of its own; ``tools()`` are its Lar tools."""

    def __init__(
        self, name: str, settings: McpServerSettings, *, log_dir: Path | None = None
    ) -> None:
        if not _SERVER_NAME.match(name):
            raise McpError(
                f"mcp: server name {name!r} must start with a letter and use only letters, "
                "digits and - (at most 31 characters)"
            )
        self.name = name
        self.settings = settings
        self.state = "starting"
        self.problem = ""
        """Why it is down, for the failing calls and ``lar mcp list``."""
        self.restarts = 0
        self.log_dir = log_dir
        self._log: TextIO | None = None
        self._client: Any = None
        self._listed: list[Any] = []
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._up = threading.Event()
        self._closing = threading.Event()
        self._restart: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name=f"mcp-{name}", daemon=True)

    # --- the connection's thread -------------------------------------------------------------

    async def _target(self, stack: contextlib.AsyncExitStack) -> Any:
        """What ``Client`` connects to; resources it opens are closed with ``stack``."""
        from mcp import StdioServerParameters

        s = self.settings
        if s.command is not None:
            from mcp.client.stdio import stdio_client

            env = {k: v.get_secret_value() for k, v in s.env.items()}
            params = StdioServerParameters(command=s.command, args=list(s.args), env=env or None)
            return stdio_client(params, errlog=self._errlog())
        assert s.url is not None
        headers = {k: v.get_secret_value() for k, v in s.headers.items()}
        if not headers:
            return s.url
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        return streamable_http_client(s.url, http_client=http)

    async def _hold(self) -> None:
        """Connect, list, stay connected until stopped or broken; again after a backoff."""
        from mcp import Client

        self._stop = asyncio.Event()
        self._restart = asyncio.Event()
        backoff = 1.0
        while not self._stop.is_set() and not self._closing.is_set():
            started = time.monotonic()
            try:
                async with contextlib.AsyncExitStack() as stack:
                    target = await self._target(stack)
                    client = await stack.enter_async_context(
                        # A backstop: the executor's bound (timeout_s) ends a call first, so a
                        # slow call is reported as a timeout and the server restarted.
                        Client(target, read_timeout_seconds=self.settings.timeout_s + 5)
                    )
                    listed = await client.list_tools()
                    self._client, self._listed = client, list(listed.tools)
                    self.state, self.problem = "up", ""
                    self._up.set()
                    self._restart.clear()
                    stop = asyncio.ensure_future(self._stop.wait())
                    restart = asyncio.ensure_future(self._restart.wait())
                    await asyncio.wait({stop, restart}, return_when=asyncio.FIRST_COMPLETED)
                    stop.cancel()
                    restart.cancel()
            except Exception as exc:  # noqa: BLE001 - a server's failure is reported, not raised
                self.problem = _describe(exc)
            finally:
                self._client = None
                self._up.clear()
            if self._stop.is_set() or self._closing.is_set():
                break
            self.state = "down"
            self.problem = self.problem or "the connection closed"
            if time.monotonic() - started > 2 * MAX_BACKOFF_S:
                backoff = 1.0  # it ran a good while: not a crash loop
            self.restarts += 1
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=backoff)
            except TimeoutError:
                pass
            backoff = min(MAX_BACKOFF_S, backoff * 2)
        self.state = "stopped"

    def _errlog(self) -> TextIO:
        """Where the server's stderr goes: ``logs/mcp-NAME.log`` in Lar's home, not the
        user's terminal."""
        if self._log is None or self._log.closed:
            if self.log_dir is None:
                self._log = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
            else:
                self.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._log = open(self.log_dir / f"mcp-{self.name}.log", "a")  # noqa: SIM115
        return self._log

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._hold())
        finally:
            self._loop.close()

    # --- use -----------------------------------------------------------------------------------

    def start(self, timeout_s: float = START_TIMEOUT_S) -> bool:
        """Start and wait until its tools are listed; False (``problem`` says why) if not."""
        self._thread.start()
        if not self._up.wait(timeout_s):
            self.problem = self.problem or f"did not answer within {timeout_s:.0f}s"
            return False
        return True

    def tools(self) -> list[Tool]:
        made: list[Tool] = []

        def down() -> str | None:
            if self.state == "up":
                return None
            return f"MCP server {self.name!r} is unavailable ({self.problem or self.state})"

        for listed in self._listed:
            description = (listed.description or listed.name).strip()
            if len(description) > MAX_DESCRIPTION:
                description = description[: MAX_DESCRIPTION - 1].rstrip() + "…"
            made.append(
                tool := SchemaTool(
                    f"{self.name}{SEPARATOR}{listed.name}",
                    description,
                    dict(listed.input_schema or {}),
                    self._caller(listed.name),
                    permission=self.settings.tools.get(listed.name, self.settings.permission),
                    timeout_s=self.settings.timeout_s,
                )
            )
            tool.down = down
        return made

    def _caller(self, tool: str) -> Any:
        async def call(**arguments: Any) -> str:
            return await self.call(tool, arguments)

        call.__name__ = tool
        return call

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """The tool's result as text. Bounded by the executor's timeout (the server's
        ``timeout_s``); a call cut off by it leaves the server to be restarted, as a hung
        server would not answer the next call either."""
        client = self._client
        if client is None or self.state != "up":
            raise RuntimeError(
                f"MCP server {self.name!r} is unavailable ({self.problem or self.state}); "
                "Lar is restarting it"
            )
        future: Future[Any] = asyncio.run_coroutine_threadsafe(
            client.call_tool(tool, dict(arguments)), self._loop
        )
        try:
            # The executor's bound comes first; this one is for callers without one.
            result = await asyncio.wait_for(
                asyncio.wrap_future(future), timeout=self.settings.timeout_s + 5
            )
        except (asyncio.CancelledError, TimeoutError):
            future.cancel()
            self._broken(f"a call to {tool} did not answer within {self.settings.timeout_s:g}s")
            raise
        except Exception as exc:
            if _is_timeout(exc):  # the SDK's own bound: as hung as the one above
                self._broken(f"a call to {tool} did not answer within {self.settings.timeout_s:g}s")
                raise TimeoutError(f"{tool} did not answer: {exc}") from None
            if self._client is None or self.state != "up" or _is_connection(exc):
                self._broken(_describe(exc))
                raise RuntimeError(
                    f"MCP server {self.name!r} failed ({_describe(exc)}); Lar is restarting it"
                ) from None
            raise
        text = _text_of(result)
        if getattr(result, "is_error", False):
            raise RuntimeError(text or f"{tool} reported an error")
        return text

    def _broken(self, why: str) -> None:
        if self.state == "up":
            self.state, self.problem = "down", why
        if self._restart is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: it is stopping anyway
                self._loop.call_soon_threadsafe(self._restart.set)

    def close(self) -> None:
        self._closing.set()  # seen by a thread that has not made its stop event yet
        if self._thread.is_alive() and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # its loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
        if self._log is not None:
            self._log.close()


def _is_connection(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return any(w in text for w in ("closed", "connection", "broken", "eof", "terminated"))


def _is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is the MCP SDK's "Request ... timed out" (JSON-RPC REQUEST_TIMEOUT)."""
    from mcp_types import REQUEST_TIMEOUT

    return getattr(getattr(exc, "error", None), "code", None) == REQUEST_TIMEOUT


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:300]


class McpServers:
    """Every configured server, started at once; ``tools`` of those that came up, ``notes``
    for those that did not (their tools are left out, with the reason)."""

    def __init__(
        self, configured: Mapping[str, McpServerSettings], *, log_dir: Path | None = None
    ) -> None:
        self.servers = [McpServer(name, s, log_dir=log_dir) for name, s in configured.items()]
        self.notes: list[str] = []

    def start(self, timeout_s: float = START_TIMEOUT_S) -> list[Tool]:
        threads = [threading.Thread(target=s.start, args=(timeout_s,)) for s in self.servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout_s + 5)
        tools: list[Tool] = []
        for server in self.servers:
            if server.state == "up":
                tools += server.tools()
            else:
                server.close()
                self.notes.append(
                    f"MCP server {server.name!r} did not start ({server.problem}); "
                    "its tools are left out"
                )
        return tools

    def close(self) -> None:
        for server in self.servers:
            server.close()
