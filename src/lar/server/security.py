"""What stands between the network and the agent (I2, I3): one ASGI middleware, checked in order.

1. **Host**: only the names this server is reached by (loopback names, the bound address) — a
   web page whose domain was rebound to 127.0.0.1 gets 421, not the agent.
2. **Body size**: a body over ``server.max_body_kb`` gets 413 before it is read.
3. **Token** (always: ``server.token``, else the one in ``$LAR_HOME/server.token``, see
   lar.server.token): ``Authorization: Bearer …`` or the panel's session cookie, compared in
   constant time; else 401 (loopback is no boundary: every local user can reach it). The
   panel's own files (which hold no data) load without it so that the panel can ask for it,
   and ``/health/live`` answers without it.
4. **CSRF**: a state-changing request (POST, PUT, PATCH, DELETE) needs an ``Authorization`` header
   (API clients; a browser cannot add one to a cross-site request without a CORS preflight, which
   this server refuses unless ``server.cors_origins`` allows it) or the ``X-CSRF-Token`` header
   equal to the ``lar_csrf`` cookie the panel got (double submit); else 403.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

from starlette.exceptions import HTTPException

__all__ = ["Guard", "is_loopback", "session_cookie", "new_csrf", "CSRF_COOKIE", "SESSION_COOKIE"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSRF_COOKIE = "lar_csrf"
SESSION_COOKIE = "lar_session"
_CHANGES = {"POST", "PUT", "PATCH", "DELETE"}


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def session_cookie(token: str) -> str:
    """The panel's cookie for ``token``: derived from it, so it dies with a changed token."""
    return hmac.new(token.encode(), b"lar panel session", hashlib.sha256).hexdigest()


def _hostname(host: str) -> str:
    """``Host`` without its port (``[::1]:8765`` → ``::1``)."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _public(path: str) -> bool:
    """Served without the token: the panel's files (no data), the token check itself and
    liveness (which says only what a 401 says too: something answers here)."""
    return path in ("/", "/auth", "/favicon.ico", "/health/live") or path.startswith("/panel/")


class _TooLarge(HTTPException):
    """Raised while the body is read (no Content-Length, or a false one): the app answers 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body over {limit // 1024} KB")


class Guard:
    def __init__(self, app: ASGIApp, *, token: str, host: str, max_body: int) -> None:
        if not token:
            raise ValueError("the guard needs a token")
        self.app = app
        self.token = token
        self.cookie = session_cookie(token)
        self.max_body = max_body
        self.hosts = {"127.0.0.1", "localhost", "::1", host.lower().strip("[]")}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "").lower()
        if host and _hostname(host) not in self.hosts:
            await _refuse(send, 421, f"this server does not answer for host {host!r}")
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            await _refuse(send, 413, f"request body over {self.max_body // 1024} KB")
            return
        cookies = _cookies(headers["cookie"]) if "cookie" in headers else {}
        path = scope.get("path", "")
        if not _public(path) and not self._authorized(headers, cookies):
            await _refuse(send, 401, "missing or wrong token (Authorization: Bearer …)", auth=True)
            return
        if scope.get("method") in _CHANGES and "authorization" not in headers:
            sent = headers.get("x-csrf-token", "")
            known = cookies.get(CSRF_COOKIE, "")
            if not (sent and known and hmac.compare_digest(sent, known)):
                await _refuse(send, 403, "missing or wrong CSRF token (X-CSRF-Token)")
                return
        await self.app(scope, self._limited(receive), send)

    def _authorized(self, headers: dict[str, str], cookies: dict[str, str]) -> bool:
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            return hmac.compare_digest(auth[7:].strip().encode(), self.token.encode())
        return hmac.compare_digest(cookies.get(SESSION_COOKIE, "").encode(), self.cookie.encode())

    def _limited(self, receive: Receive) -> Receive:
        seen = 0

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _TooLarge(self.max_body)
            return message

        return wrapped


def new_csrf() -> str:
    return secrets.token_urlsafe(24)


def _cookies(header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # noqa: BLE001 - a malformed Cookie header is no cookie
        return {}
    return {k: m.value for k, m in jar.items()}


async def _refuse(send: Send, status: int, message: str, *, auth: bool = False) -> None:
    kind = {401: "authentication_error", 403: "permission_error"}.get(
        status, "invalid_request_error"
    )
    body = json.dumps({"error": {"message": message, "type": kind, "code": status}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if auth:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
