"""Embedded llama.cpp engine (E2), through xllamacpp's in-process server.

xllamacpp runs llama.cpp's own server inside this process and listens on a random loopback port,
guarded by a per-process random API key; Lar then talks to it with the same OpenAI-compatible
code as any other endpoint. One wire path to test, llama.cpp's chat templates and native tool
parsing for free, and prebuilt wheels instead of a 10-minute compile (README, "Why xllamacpp").
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from lar.engines.base import Engine, StreamChunk
from lar.engines.openai_http import OpenAIEngine
from lar.errors import EngineError
from lar.types import Message, ModelResponse, ToolSpec

__all__ = ["LlamaCppEngine"]

_servers: dict[tuple[str, int, int], tuple[Any, str, str]] = {}
_lock = threading.Lock()


def _start_server(path: Path, n_ctx: int, threads: int) -> tuple[str, str]:
    """Load the model once per process and return (base_url, api_key)."""
    key = (str(path), n_ctx, threads)
    with _lock:
        if key in _servers:
            _, url, api_key = _servers[key]
            return url, api_key
        try:
            import xllamacpp
        except ImportError as exc:
            raise EngineError(
                "llamacpp", "the embedded engine needs xllamacpp: pip install xllamacpp"
            ) from exc
        if not path.is_file():
            raise EngineError("llamacpp", f"model file not found: {path}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.use_jinja = True
        params.warmup = False
        params.verbosity = -1
        api_key = secrets.token_urlsafe(24)
        params.api_keys = [api_key]
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # llama.cpp reports load failures as bare RuntimeErrors
            raise EngineError("llamacpp", f"cannot load {path}: {exc}") from exc
        url = server.listening_address.rstrip("/") + "/v1"
        _servers[key] = (server, url, api_key)
        return url, api_key


def default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


class LlamaCppEngine(Engine):
    kind = "llamacpp"
    prompt_cache = True
    slots = 1
    """Requests llama.cpp serves at once (``n_parallel``); ``QueuedEngine`` queues the rest."""

    def __init__(
        self,
        *,
        path: str | Path,
        name: str | None = None,
        model: str | None = None,
        n_ctx: int = 4096,
        threads: int | None = None,
        timeout_s: float = 300.0,
        defaults: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.model = model or self.path.stem
        """What the model is (the served name in responses and log lines)."""
        self.name = name or self.model
        """Which configured model this is (``default``, ``tiny`` …)."""
        self.n_ctx = n_ctx
        self.context_size = n_ctx
        self.threads = threads or default_threads()
        self.timeout_s = timeout_s
        self.defaults = defaults or {}
        self._http: OpenAIEngine | None = None

    def __repr__(self) -> str:
        return f"LlamaCppEngine(name={self.name!r}, path={str(self.path)!r})"

    async def _engine(self) -> OpenAIEngine:
        if self._http is None:
            url, api_key = await asyncio.to_thread(
                _start_server, self.path, self.n_ctx, self.threads
            )
            # Two sessions' first requests may both get here: keep the first client only, or
            # the other's connections leak.
            if self._http is None:
                # A loopback call to our own server: retrying would only repeat a local failure.
                self._http = OpenAIEngine(
                    base_url=url,
                    model=self.model,
                    name=self.name,
                    api_key=api_key,
                    timeout_s=self.timeout_s,
                    retries=0,
                    defaults=self.defaults,
                )
        return self._http

    async def load(self) -> None:
        """Load the model now rather than on the first request."""
        await self._engine()

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        engine = await self._engine()
        async for chunk in engine.stream(messages, tools, **params):
            if chunk.response is not None:
                chunk.response.engine = self.kind
                chunk.response.model = self.model
                chunk.response.source = self.name
            yield chunk

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        engine = await self._engine()
        response = await engine.generate(messages, tools, **params)
        response.engine = self.kind
        response.model = self.model
        response.source = self.name
        return response

    async def count_tokens(self, texts: Sequence[str]) -> list[int] | None:
        engine = await self._engine()
        return await engine.count_tokens(texts)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()


def serve(
    path: Path,
    *,
    alias: str,
    port: int,
    host: str = "127.0.0.1",
    n_ctx: int = 4096,
    threads: int | None = None,
    api_key: str | None = None,
) -> Any:
    """Start llama.cpp's OpenAI-compatible server for ``path`` (``lar model serve``); the
    returned server object keeps serving until it is garbage-collected or the process ends."""
    try:
        import xllamacpp
    except ImportError as exc:
        raise EngineError("llamacpp", "serving needs xllamacpp: pip install xllamacpp") from exc
    if not path.is_file():
        raise EngineError("llamacpp", f"model file not found: {path}")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = [alias]
    params.hostnames = [host]
    params.port = port
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads or default_threads()
    params.cpuparams_batch.n_threads = threads or default_threads()
    params.use_jinja = True
    params.warmup = False
    params.verbosity = -1
    if api_key:
        params.api_keys = [api_key]
    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - llama.cpp reports failures as bare RuntimeErrors
        raise EngineError("llamacpp", f"cannot serve {path} on {host}:{port}: {exc}") from exc
