"""Health (D10): ``/health/live``, ``/health/ready`` and ``/health/capabilities``.

Liveness says the process answers. Readiness checks what every run needs: the database, the
engine (loaded, or its endpoint answering) and the embedder when memory uses one; any failure is
503 with the reasons. Each capability has a minimal probe — a real sandboxed process, a real
recall, a real HTTP fetch, a real engine call — and one that fails is UNAVAILABLE: the tools that
need it are no longer offered, the model is told why in its instructions, and a declared fallback
(recall by words alone, the configured fallback models) carries on where one exists.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from lar.server.hub import Hub

__all__ = ["router", "Capability", "Health"]

router = APIRouter(prefix="/health", tags=["Health"])

PROBE_TIMEOUT_S = 10.0
FRESH_S = 30.0
"""Probe results younger than this are reused (a panel polling does not spawn sandboxes)."""


@dataclass
class Capability:
    name: str
    probe: Callable[[], Awaitable[str]]
    """Returns what it checked; raises (or times out) when the capability does not work."""
    tools: tuple[str, ...] = ()
    fallback: str | None = None
    status: str = "UNKNOWN"
    detail: str = ""
    checked: float = 0.0

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "tools": list(self.tools),
            "fallback": self.fallback if self.status == "UNAVAILABLE" else None,
            "checked": self.checked,
        }


@dataclass
class Health:
    hub: Hub
    capabilities: dict[str, Capability] = field(default_factory=dict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        for cap in _capabilities(self):
            self.capabilities[cap.name] = cap
        self.add_engines()

    def add_engines(self) -> None:
        """A probe for each engine built so far (the server loads the default one first)."""
        for engine in self.hub.runner.engines():
            name = f"engine {engine.name}"
            if name not in self.capabilities:

                async def probe(engine: Any = engine) -> str:
                    return await probe_engine(engine)

                fallback = ", ".join(self.hub.config.fallbacks) or None
                self.capabilities[name] = Capability(name, probe, fallback=fallback)

    async def check(self, *, fresh: bool = False) -> list[Capability]:
        self.add_engines()
        async with self._lock:
            now = time.time()
            for cap in self.capabilities.values():
                if fresh or now - cap.checked > FRESH_S:
                    await _run(cap)
            hidden = {
                t: f"{c.name} is unavailable ({c.detail})"
                for c in self.capabilities.values()
                if c.status == "UNAVAILABLE"
                for t in c.tools
            }
            self.hub.hide(hidden)
            return list(self.capabilities.values())

    async def ready(self) -> list[str]:
        """What stops runs now (empty: ready)."""
        problems = []
        try:
            await asyncio.to_thread(self.hub.tasks.db.execute, "SELECT 1")
        except Exception as exc:  # noqa: BLE001 - any failure is the answer
            problems.append(f"database: {exc}")
        self.hub.runner.engine(self.hub.config.model)  # built (not loaded) if not yet
        for engine in self.hub.runner.engines():
            try:
                await asyncio.wait_for(probe_engine(engine), PROBE_TIMEOUT_S)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"engine {engine.name}: {_why(exc)}")
        memory = self.hub.runner.memory
        if memory is not None and self.hub.config.memory.embedder and memory.store.embedder is None:
            problems.append(
                f"embedder {self.hub.config.memory.embedder}: not loaded (see `lar doctor`)"
            )
        return problems


async def _run(cap: Capability) -> None:
    try:
        cap.detail = await asyncio.wait_for(cap.probe(), PROBE_TIMEOUT_S)
        cap.status = "OK"
    except Exception as exc:  # noqa: BLE001 - a failing probe is the finding
        cap.status, cap.detail = "UNAVAILABLE", _why(exc)
    cap.checked = time.time()


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {PROBE_TIMEOUT_S:g}s"
    return str(exc) or type(exc).__name__


async def probe_engine(engine: Any) -> str:
    """An engine's endpoint answers: the embedded one once loaded, a remote one always."""
    inner = getattr(engine, "inner", engine)
    http = getattr(inner, "_http", None) if inner.kind == "llamacpp" else inner
    if inner.kind == "llamacpp" and http is None:
        raise RuntimeError("the model is not loaded")
    base_url = getattr(http, "base_url", None)
    if base_url is None:
        return f"{engine.name}: in process"
    import httpx

    key = getattr(http, "_api_key", None)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(timeout=5.0) as client:
        try:
            response = await client.get(f"{base_url}/models", headers=headers)
        except httpx.HTTPError as exc:
            raise RuntimeError(f"cannot reach {base_url}: {type(exc).__name__}") from None
    if response.status_code in (502, 503, 504):  # down, or still loading (llama.cpp: 503)
        raise RuntimeError(f"{base_url}/models answered {response.status_code}")
    return f"{engine.name}: {base_url} answers"


_PROBE_TEXT = "Lar health probe page"


@contextmanager
def _loopback_page(text: str) -> Iterator[str]:
    """A one-page HTTP server on a free loopback port for as long as the block runs."""
    body = f"<html><body><p>{text}</p></body></html>".encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - its signature
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, name="health-page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _capabilities(health: Health) -> list[Capability]:
    hub = health.hub

    async def sandbox() -> str:
        from lar.tools import SandboxPolicy, run_sandboxed

        policy = SandboxPolicy(workspace=hub.config.home, timeout_s=5.0, cpu_s=5)
        result = await run_sandboxed(["python3", "-c", "print(6 * 7)"], policy)
        if result.exit_code != 0 or result.stdout.strip() != "42":
            raise RuntimeError(f"exit {result.exit_code}: {result.stderr.strip()[:200]}")
        return f"a sandboxed process ran ({result.level})"

    async def recall() -> str:
        memory = hub.runner.memory
        if memory is None:
            raise RuntimeError("memory is off")
        await asyncio.to_thread(memory.search, "health probe", 1, log_it=False)
        how = "words and vectors" if memory.store.embedder is not None else "words only"
        return f"recall answered ({how})"

    async def web() -> str:
        from lar.tools import web_scan

        # A page of its own on loopback, not one of this server's: the first probe runs
        # before the server listens, and fetching its own address then failed every time
        # (web_scan was hidden from every session until a later probe).
        def fetch() -> str:  # in a thread: stopping the page's server waits up to 0.5 s
            with _loopback_page(_PROBE_TEXT) as url:
                return str(web_scan.fn(url))

        text = await asyncio.to_thread(fetch)
        if _PROBE_TEXT not in text:
            raise RuntimeError("the page came back without its text")
        return "fetched a page over HTTP"

    return [
        Capability("sandbox", sandbox, tools=("code_run", "shell")),
        Capability(
            "memory recall",
            recall,
            tools=("memory_search",),
            fallback="the prompt goes without recalled memories",
        ),
        Capability("web", web, tools=("web_scan",)),
    ]


def _health(request: Request) -> Health:
    health: Health = request.app.state.health
    return health


@router.get("/live")
async def live() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@router.get("/ready")
async def ready(request: Request) -> JSONResponse:
    """Database, engine and embedder work (503 with the reasons when not)."""
    problems = await _health(request).ready()
    body = {"status": "ready" if not problems else "not ready", "problems": problems}
    return JSONResponse(body, status_code=503 if problems else 200)


@router.get("/capabilities")
async def capabilities(request: Request, fresh: bool = False) -> dict[str, Any]:
    """Each capability's probe result; UNAVAILABLE ones have their tools hidden."""
    caps = await _health(request).check(fresh=fresh)
    return {"capabilities": [c.view() for c in caps]}
