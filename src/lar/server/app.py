"""The ASGI app behind ``lar serve``: the OpenAI-compatible API, Lar's API, health and the panel,
all behind one guard (lar.server.security)."""

from __future__ import annotations

import gc
import hmac
import logging
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from lar import __version__
from lar.server import api, health, openai_api
from lar.server.health import Health
from lar.server.hub import Hub
from lar.server.security import CSRF_COOKIE, SESSION_COOKIE, Guard, new_csrf, session_cookie
from lar.server.token import server_token

__all__ = ["create_app", "PANEL_DIR"]

PANEL_DIR = Path(__file__).parent / "panel"

_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
}


class Login(BaseModel):
    token: str


def create_app(
    hub: Hub, *, self_url: str | None = None, probe_on_start: bool = True, preload: bool = False
) -> Any:
    """The app for ``hub``; ``self_url`` (``http://127.0.0.1:PORT``) is the address the
    server will listen on, told to ``app.state.on_ready``; ``preload`` loads the default model
    before the first request."""
    settings = hub.config.server
    token = server_token(hub.config)
    assert token is not None  # made when missing
    checks = Health(hub)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if preload:
            engine = hub.runner.engine(hub.config.model)
            load = getattr(getattr(engine, "inner", engine), "load", None)
            if load is not None:
                await load()
            checks.add_engines()
        if probe_on_start:
            await checks.check(fresh=True)
        hub.start_jobs()
        # Everything loaded so far (modules, the model's client, tools) lives as long as the
        # server: out of the collector's way, a full collection no longer scans it (~100 ms
        # pauses under load before, bench/server.py).
        gc.collect()
        gc.freeze()
        on_ready = getattr(app.state, "on_ready", None)
        if on_ready is not None:
            on_ready(self_url or "")
        try:
            yield
        finally:
            on_stop = getattr(app.state, "on_stop", None)
            if on_stop is not None:
                on_stop()
            await hub.aclose()

    app = FastAPI(
        title="Lar",
        version=__version__,
        description="A local-first personal agent: OpenAI-compatible chat, runs and their "
        "events, approvals, memory and health. Every request carries the server's token.",
        lifespan=lifespan,
    )
    app.state.hub = hub
    app.state.health = checks
    app.include_router(openai_api.router)
    app.include_router(api.router)
    app.include_router(health.router)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = hub.mask(str(exc.detail))
        kind = _KINDS.get(exc.status_code, "server_error")
        body = {"error": {"message": message, "type": kind, "code": exc.status_code}}
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        """A bug: logged for the owner (secrets masked), never a traceback to the client."""
        told = hub.mask("".join(traceback.format_exception(exc)))
        logging.getLogger("lar.server").error("%s %s: %s", request.method, request.url.path, told)
        body = {
            "error": {
                "message": f"internal error ({type(exc).__name__}); the server's log has more",
                "type": "server_error",
                "code": 500,
            }
        }
        return JSONResponse(body, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message = f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
        body = {"error": {"message": message, "type": "invalid_request_error", "code": 400}}
        return JSONResponse(body, status_code=400)

    @app.get("/", include_in_schema=False)
    async def panel(request: Request) -> Response:
        response = FileResponse(PANEL_DIR / "index.html", headers={"Cache-Control": "no-store"})
        if not request.cookies.get(CSRF_COOKIE):
            response.set_cookie(CSRF_COOKIE, new_csrf(), httponly=False, samesite="strict")
        return response

    @app.post("/auth", include_in_schema=False)
    async def auth(body: Login) -> Response:
        """The panel's sign-in: the token for a session cookie (HttpOnly, SameSite=Strict)."""
        if not hmac.compare_digest(body.token.encode(), token.encode()):
            raise HTTPException(401, "wrong token")
        response = JSONResponse({"auth": "ok"})
        response.set_cookie(SESSION_COOKIE, session_cookie(token), httponly=True, samesite="strict")
        return response

    app.mount("/panel", StaticFiles(directory=PANEL_DIR), name="panel")
    guarded: Any = Guard(
        app,
        token=token,
        host=settings.host,
        max_body=settings.max_body_kb * 1024,
    )
    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        guarded = CORSMiddleware(
            guarded,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-Lar-Session", "X-CSRF-Token"],
        )
    guarded.fastapi = app  # tests and the CLI reach the app's state through the guard
    return guarded
