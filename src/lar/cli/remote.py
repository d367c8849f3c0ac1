"""``lar run`` and ``lar chat`` through a running ``lar serve``: the model is loaded and its
prompt prefix cached already, so a request starts at once instead of loading the model again.

``lar serve`` writes ``$LAR_HOME/server.json`` (its URL and process id) while it runs; a command
that finds it, and the server answering, sends its request there (``--local`` never does). The
run's typed events come back over Lar's SSE stream and are shown exactly as a local run's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import httpx

from lar.errors import LarError
from lar.server import server_token
from lar.types import EVENT_TYPES, Event, Final, Message, ToolCall, event_from_json

__all__ = ["RemoteAgent", "find_server", "remote_agent"]

Confirm = Callable[..., bool]
"""``(call, tool) -> bool``, as ``lar chat`` asks a local run's calls."""


def find_server(home: Path) -> str | None:
    """The URL of a ``lar serve`` of this home that answers now, else None."""
    path = home / "server.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        url, pid = str(info["url"]), int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # left behind by a server that was killed
    except PermissionError:
        pass  # alive, another user's
    try:
        if httpx.get(f"{url}/health/live", timeout=1.0).status_code == 200:
            return url
    except httpx.HTTPError:
        return None
    return None


class RemoteAgent:
    """What ``lar run`` and ``lar chat`` need of an agent, served by ``lar serve``."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None,
        workspace: Path | None,
        model: str | None = None,
        approvals: Literal["wait", "allow", "deny"] = "deny",
        confirm: Confirm | None = None,
    ) -> None:
        self.url = url
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=url, headers=headers, timeout=httpx.Timeout(30.0))
        self.workspace = (workspace or Path.cwd()).resolve()
        self.model = model
        self.approvals = approvals
        self.confirm = confirm
        self.session_id: str | None = None
        self.run_id: str | None = None
        self.runner = SimpleNamespace(tasks=None)
        """No local task store: tasks are the server's (``/api/tasks``)."""
        self.memory = None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            r = self.http.post(path, json=body)
        except httpx.HTTPError as exc:
            raise LarError(f"lar serve at {self.url} did not answer: {exc}") from None
        data: dict[str, Any] = r.json()
        if r.status_code >= 400:
            raise LarError(f"lar serve: {data.get('error', {}).get('message', r.text)}")
        return data

    def stream(
        self,
        text: str,
        *,
        history: list[Message] | None = None,
        urgency: float = 0.0,
        aside: bool = False,
    ) -> Iterator[Event]:
        body: dict[str, Any] = {
            "text": text,
            "workspace": str(self.workspace),
            "history": [
                {"role": m.role, "content": m.content}
                for m in history or []
                if m.role in ("user", "assistant") and m.content and not m.tool_calls
            ],
        }
        if self.approvals == "deny":
            body["approvals"] = "deny"  # else the owner's setting: waiting calls are asked here
        if self.session_id and not aside:
            body["session"] = self.session_id
        if self.model:
            body["model"] = self.model
        run = self._post("/api/runs", body)
        self.run_id = run["id"]
        if not aside:
            self.session_id = run["session"]
        answer = None
        for event in self._events(run["id"]):
            if isinstance(event, Final):
                answer = event.text
            yield event
        if history is not None and answer is not None:
            history += [Message("user", text), Message("assistant", answer)]

    def _events(self, run_id: str) -> Iterator[Event]:
        timeout = httpx.Timeout(30.0, read=None)  # a run may think (or wait for a yes) long
        with self.http.stream("GET", f"/api/runs/{run_id}/events", timeout=timeout) as r:
            kind = ""
            for line in r.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind != "end":
                    data = json.loads(line[6:])
                    if kind in EVENT_TYPES:
                        yield event_from_json(line[6:])
                    elif kind == "waiting_user":
                        self._answer(data["approval"])

    def _answer(self, approval: dict[str, Any]) -> None:
        """Ask the terminal's approver as a local run would (the server's danger warnings
        shown), and send its answer."""
        allow = self.approvals == "allow"  # --yes: this terminal says yes to each
        if not allow and self.confirm is not None:
            call = ToolCall(approval["id"], approval["tool"], approval["arguments"])
            reasons = SimpleNamespace(reasons=approval.get("reasons") or [])
            tool = SimpleNamespace(name=approval["tool"], danger=lambda args, ctx: reasons)
            allow = bool(self.confirm(call, tool))
        self._post(f"/api/approvals/{approval['id']}", {"approve": allow})

    def interrupt(self) -> None:
        if self.run_id is not None:
            try:
                self.http.post(f"/api/runs/{self.run_id}/stop", json={})
            except httpx.HTTPError:
                pass

    def session(self) -> Any:
        agent = self

        class _Session:
            engine = SimpleNamespace(name=f"{agent.model or 'lar'} at {agent.url}")
            track = "server"

            def reset(self) -> None:
                if agent.session_id:
                    agent._post(f"/api/sessions/{agent.session_id}/reset", {})
                agent.session_id = None

        return _Session()

    def close(self) -> None:
        self.http.close()


def remote_agent(
    *,
    workspace: Path | None,
    model: str | None,
    approvals: Literal["wait", "allow", "deny"],
    confirm: Confirm | None = None,
    quiet: bool = False,
) -> RemoteAgent | None:
    """An agent on the running ``lar serve`` of this home, or None (then run in process)."""
    from lar.cli.render import console_err
    from lar.config import load_config

    config = load_config()
    url = find_server(config.home)
    if url is None:
        return None
    token = server_token(config, create=False)
    folder = (workspace or Path.cwd()).resolve()
    roots = _workspace_roots(url, token)
    if roots is not None and not any(folder.is_relative_to(r) for r in roots):
        if not quiet:
            console_err().print(
                f"[dim]lar serve at {url} does not work in {folder} (server.workspaces): "
                "running here[/dim]"
            )
        return None
    if not quiet:
        console_err().print(f"[dim]using lar serve at {url} (--local runs here instead)[/dim]")
    return RemoteAgent(
        url, token=token, workspace=workspace, model=model, approvals=approvals, confirm=confirm
    )


def _workspace_roots(url: str, token: str | None) -> list[Path] | None:
    """The folders the server at ``url`` runs requests in (None: it did not say)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        r = httpx.get(f"{url}/api/status", headers=headers, timeout=5.0)
        roots = r.json().get("workspaces") if r.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return [Path(p) for p in roots] if isinstance(roots, list) else None
