"""Embedded llama.cpp engine (E2), through xllamacpp's in-process server.

xllamacpp runs llama.cpp's own server inside this process and listens on a random loopback port,
guarded by a per-process random API key; Lar then talks to it with the same OpenAI-compatible
code as any other endpoint. One wire path to test, llama.cpp's chat templates and native tool
parsing for free, and prebuilt wheels instead of a 10-minute compile (README, "Why xllamacpp").
"""

from __future__ import annotations

import asyncio
import os
import re
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

_servers: dict[tuple[str, int, int, str], tuple[Any, str, str, PromptCache | None]] = {}
_lock = threading.Lock()
_SLOT = 0  # n_parallel is 1: the one slot every request uses


class PromptCache:
    """The KV cache of one model's last prompt, kept on disk between processes.

    Processing a prompt is the slow half of a CPU run (about 17 tokens a second on two cores,
    against about 9 for decoding), and every ``lar run`` starts with the same system prompt and
    tool listing. llama.cpp saves a slot's tokens and KV cache to a file and restores them into a
    new process; the next request then processes only what differs from the restored tokens.
    The file is saved once a process, after its first answer, and restored when the model loads.

    The file holds the prompt's tokens (the request, recalled memories): it lives in Lar's home
    with mode 0600, like ``lar.db``. One file per model file, context size and llama.cpp build;
    a file that fails to restore is deleted and the run goes on without it.
    """

    def __init__(self, folder: Path, path: Path, n_ctx: int) -> None:
        import hashlib

        import xllamacpp

        st = path.stat()
        ident = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{n_ctx}|{xllamacpp.__version__}"
        self.folder = folder
        self.name = hashlib.sha256(ident.encode()).hexdigest()[:24] + ".kv"
        self.saved = False

    @property
    def file(self) -> Path:
        return self.folder / self.name

    def _action(self, url: str, api_key: str, action: str, filename: str) -> bool:
        import httpx

        base = url.removesuffix("/v1")
        try:
            response = httpx.post(
                f"{base}/slots/{_SLOT}?action={action}",
                json={"filename": filename},
                headers={"Authorization": f"Bearer {api_key}"},
                timeout=60.0,
            )
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def marked(self, mark: str) -> str:
        """The file name of a state kept under ``mark`` (``LlamaCppEngine.set_mark``)."""
        if not re.fullmatch(r"[\w.-]{1,64}", mark) or mark.startswith("."):
            raise ValueError(f"a mark is 1-64 letters, digits, '.', '-' or '_': {mark!r}")
        return f"{self.name.removesuffix('.kv')}.{mark}.mark"

    def keep(self, url: str, api_key: str, name: str) -> bool:
        """Save the slot as ``name`` (a whole file or none, as ``save``)."""
        temp = f"{name}.{os.getpid()}.tmp"
        if not self._action(url, api_key, "save", temp):
            (self.folder / temp).unlink(missing_ok=True)
            return False
        os.chmod(self.folder / temp, 0o600)
        os.replace(self.folder / temp, self.folder / name)
        return True

    def load(self, url: str, api_key: str, name: str | None) -> bool:
        """Restore the slot from ``name``, or empty it (None)."""
        if name is None:
            return self._action(url, api_key, "erase", "")
        return (self.folder / name).is_file() and self._action(url, api_key, "restore", name)

    def restore(self, url: str, api_key: str) -> bool:
        if not self.file.is_file():
            return False
        if self._action(url, api_key, "restore", self.name):
            return True
        self.file.unlink(missing_ok=True)  # another build's or a torn file: never tried again
        return False

    def save(self, url: str, api_key: str) -> bool:
        """Save the slot (once a process): written under a temporary name, then renamed, so a
        process restoring at the same moment reads a whole file or none."""
        if self.saved:
            return False
        self.saved = True
        return self.keep(url, api_key, self.name)


def _start_server(
    path: Path, n_ctx: int, threads: int, cache_dir: Path | None = None
) -> tuple[str, str, PromptCache | None]:
    """Load the model once per process; returns (base_url, api_key, prompt cache or None)."""
    key = (str(path), n_ctx, threads, str(cache_dir or ""))
    with _lock:
        if key in _servers:
            _, url, api_key, cache = _servers[key]
            return url, api_key, cache
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
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            params.slot_save_path = f"{cache_dir}/"  # joined to the file name as is
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # llama.cpp reports load failures as bare RuntimeErrors
            raise EngineError("llamacpp", f"cannot load {path}: {exc}") from exc
        url = server.listening_address.rstrip("/") + "/v1"
        cache = PromptCache(cache_dir, path, n_ctx) if cache_dir is not None else None
        if cache is not None:
            cache.restore(url, api_key)
        _servers[key] = (server, url, api_key, cache)
        return url, api_key, cache


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
        prompt_cache_dir: str | Path | None = None,
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
        self.prompt_cache_dir = Path(prompt_cache_dir).expanduser() if prompt_cache_dir else None
        """Where the last prompt's KV cache is kept between processes (``PromptCache``)."""
        self._http: OpenAIEngine | None = None
        self._cache: PromptCache | None = None
        self._url_key = ("", "")

    def __repr__(self) -> str:
        return f"LlamaCppEngine(name={self.name!r}, path={str(self.path)!r})"

    async def _engine(self) -> OpenAIEngine:
        if self._http is None:
            url, api_key, cache = await asyncio.to_thread(
                _start_server, self.path, self.n_ctx, self.threads, self.prompt_cache_dir
            )
            self._cache, self._url_key = cache, (url, api_key)
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
        await self._save_cache()

    async def _save_cache(self) -> None:
        cache = self._cache
        if cache is not None and not cache.saved:
            await asyncio.to_thread(cache.save, *self._url_key)

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        engine = await self._engine()
        response = await engine.generate(messages, tools, **params)
        response.engine = self.kind
        response.model = self.model
        response.source = self.name
        await self._save_cache()
        return response

    async def set_mark(self, mark: str) -> bool:
        """Keep the slot's tokens and KV cache in a file beside the prompt cache's (needs
        ``prompt_cache``; the file is the caller's to delete: ``drop_mark``)."""
        await self._engine()
        cache = self._cache
        return cache is not None and await asyncio.to_thread(
            cache.keep, *self._url_key, cache.marked(mark)
        )

    async def rewind(self, mark: str | None = None) -> bool:
        await self._engine()
        cache = self._cache
        if cache is None:
            return False
        name = cache.marked(mark) if mark is not None else None
        return await asyncio.to_thread(cache.load, *self._url_key, name)

    def drop_mark(self, mark: str) -> None:
        if self._cache is not None:
            (self._cache.folder / self._cache.marked(mark)).unlink(missing_ok=True)

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
