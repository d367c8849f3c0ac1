"""Lar's own API (``/api``): runs and their typed event streams, tasks, approvals, memory,
the inbox and jobs, roles, sessions, models and status. The panel is built on it only; the
OpenAPI page (``/docs``) lists every route with its body."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from lar.errors import LarError
from lar.server.approvals import ApprovalClosed
from lar.server.hub import Hub
from lar.server.runs import Approving, RunLog
from lar.types import Message, to_dict

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["Lar"])


def _hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class RunRequest(BaseModel):
    text: str = Field(min_length=1, description="What you want done.")
    session: str | None = Field(None, description="Continue this session (default: a new one).")
    model: str | None = Field(None, description="A configured model (default: the router's).")
    history: list[Turn] = Field(default_factory=list, description="Earlier turns, oldest first.")
    workspace: str | None = Field(
        None,
        description="Absolute folder the tools work in (default: the server's); only the "
        "server's own folder, or one inside server.workspaces, is accepted.",
    )
    approvals: Approving | None = Field(
        None,
        description="Calls that need a yes: the server's setting (server.approvals, default "
        "wait: an answer at /api/approvals) unless the request asks for less — `deny` them "
        "all, or `wait` where the server allows all. A request never asks for more.",
    )


class Answer(BaseModel):
    approve: bool


# --- runs ------------------------------------------------------------------------------------


@router.post("/runs", status_code=202)
async def start_run(body: RunRequest, request: Request) -> dict[str, Any]:
    """Start a run; follow it at ``/api/runs/{id}/events``."""
    hub = _hub(request)
    if body.model is not None and body.model not in hub.config.model_names():
        known = ", ".join(hub.config.model_names())
        raise HTTPException(404, f"unknown model {body.model!r}; known: {known}")
    workspace = ""
    if body.workspace is not None:
        folder = Path(body.workspace)
        if not folder.is_absolute() or not await asyncio.to_thread(folder.is_dir):
            raise HTTPException(400, f"workspace {body.workspace!r} is not an absolute folder")
        allowed = await asyncio.to_thread(hub.allows_workspace, folder)
        if not allowed:
            roots = ", ".join(str(r) for r in hub.workspace_roots())
            raise HTTPException(
                403,
                f"workspace {body.workspace!r} is not one this server works in ({roots}); "
                "its owner can add it to server.workspaces in config.yaml",
            )
        workspace = str(await asyncio.to_thread(folder.resolve))
    approvals = _approvals(hub.config.server.approvals, body.approvals)
    run = hub.start(
        body.text,
        session_id=body.session,
        history=[Message(t.role, t.content) for t in body.history],
        model=body.model or "",
        workspace=workspace,
        approvals=approvals,
    )
    return run.summary()


_LEVELS = {"deny": 0, "wait": 1, "allow": 2}


def _approvals(owner: Approving, asked: Approving | None) -> Approving:
    """The request's approvals where they ask for no more than the owner set, else 403."""
    if asked is None:
        return owner
    if _LEVELS[asked] > _LEVELS[owner]:
        raise HTTPException(
            403,
            f"approvals {asked!r}: this server's owner set {owner!r} (server.approvals in "
            "config.yaml); a request may ask for less, never for more",
        )
    return asked


@router.post("/runs/{run_id}/stop")
async def stop_run(run_id: str, request: Request) -> dict[str, Any]:
    """Stop a run at its next step; its task stays resumable (``/api/tasks/{id}/resume``)."""
    hub = _hub(request)
    try:
        stopped = hub.stop(run_id)
    except KeyError:
        raise HTTPException(404, f"no run {run_id!r} on this server") from None
    return {"id": run_id, "stopped": stopped}


@router.get("/runs")
async def list_runs(request: Request, limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
    """Runs of this server (newest first), then older ones from the trace store."""
    hub = _hub(request)
    live = [r.summary() for r in reversed(hub.runs.values())]
    seen = {r["id"] for r in live}
    traces = hub.runner.traces
    older: list[dict[str, Any]] = []
    if traces is not None:
        for t in await asyncio.to_thread(traces.recent, limit):
            if t.id not in seen:
                older.append(
                    {
                        "id": t.id,
                        "session": t.session,
                        "request": t.query,
                        "status": "succeeded" if t.success else t.outcome,
                        "model": t.model or "",
                        "created": t.created,
                        "answer": t.answer,
                        "error": t.error,
                    }
                )
    return {"runs": hub.mask([*live, *older][:limit])}


@router.get("/runs/{run_id}")
async def get_run(run_id: str, request: Request) -> dict[str, Any]:
    """A run: its summary, its events (while this server has them) and its trace's steps."""
    hub = _hub(request)
    run = hub.runs.get(run_id)
    out: dict[str, Any] = {}
    if run is not None:
        out = {**run.summary(), "events": run.events}
    trace = await _trace(hub, run_id)
    if trace is not None:
        out["trace"] = trace
        out.setdefault("id", run_id)
        out.setdefault("request", trace.get("query"))
        out.setdefault("status", "succeeded" if trace.get("success") else trace.get("outcome"))
        out.setdefault("answer", trace.get("answer"))
    if not out:
        raise HTTPException(404, f"no run {run_id!r}")
    return hub.mask(out)  # type: ignore[no-any-return]


async def _trace(hub: Hub, run_id: str) -> dict[str, Any] | None:
    from lar.errors import LarError

    traces = hub.runner.traces
    if traces is None:
        return None
    try:
        trace = await asyncio.to_thread(traces.get, run_id)
    except LarError:
        return None
    data: dict[str, Any] = to_dict(trace)
    data.pop("steps_json", None)
    return data


@router.get("/runs/{run_id}/events")
async def run_events(
    run_id: str, request: Request, start: int = Query(0, ge=0, alias="from")
) -> StreamingResponse:
    """The run's typed events as server-sent events (``event: <type>``), from event ``from``;
    ``event: end`` carries the run's summary when it is over."""
    hub = _hub(request)
    run = hub.runs.get(run_id)
    if run is None:
        raise HTTPException(404, f"no run {run_id!r} on this server (finished runs: /api/runs)")
    return StreamingResponse(
        _sse(hub, run, start), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )


async def _sse(hub: Hub, run: RunLog, start: int) -> AsyncIterator[str]:
    i = start
    async for event in run.follow(start):
        if event is None:
            yield ": keep-alive\n\n"
            continue
        data = json.dumps(event, ensure_ascii=False, default=str)  # events come masked
        yield f"id: {i}\nevent: {event.get('type', 'event')}\ndata: {data}\n\n"
        i += 1
    yield f"event: end\ndata: {json.dumps(hub.mask(run.summary()), default=str)}\n\n"


# --- tasks -----------------------------------------------------------------------------------


@router.get("/tasks")
async def list_tasks(request: Request, limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
    hub = _hub(request)
    records = await asyncio.to_thread(hub.tasks.list, limit)
    return {"tasks": hub.mask([to_dict(r) for r in records])}


@router.post("/tasks/{task_id}/resume", status_code=202)
async def resume_task(task_id: str, request: Request) -> dict[str, Any]:
    """Continue an interrupted task from its last checkpoint (done tool calls are not redone)."""
    from lar.errors import LarError

    hub = _hub(request)
    if task_id in hub.runs and not hub.runs[task_id].done:
        raise HTTPException(409, f"task {task_id} is running on this server")
    try:
        record = await asyncio.to_thread(hub.tasks.get, task_id)
    except LarError as exc:
        raise HTTPException(404, str(exc)) from None
    if record.status in ("succeeded", "failed"):
        raise HTTPException(409, f"task {task_id} already ended ({record.status})")
    return hub.resume(task_id).summary()


# --- approvals -------------------------------------------------------------------------------


@router.get("/approvals")
async def list_approvals(request: Request) -> dict[str, Any]:
    """Calls waiting for a yes or no (tool, arguments, danger warnings, deadline)."""
    hub = _hub(request)
    return {"approvals": [a.view() for a in hub.approvals.pending()]}


@router.post("/approvals/{approval_id}")
async def answer_approval(approval_id: str, body: Answer, request: Request) -> dict[str, Any]:
    """Approve (the call runs) or deny (the model is told) a waiting call."""
    hub = _hub(request)
    try:
        return hub.approvals.answer(approval_id, body.approve).view()
    except KeyError:
        raise HTTPException(404, f"no approval {approval_id!r}") from None
    except ApprovalClosed as exc:
        raise HTTPException(409, str(exc)) from None


# --- memory ----------------------------------------------------------------------------------


def _memory(hub: Hub) -> Any:
    if hub.runner.memory is None:
        raise HTTPException(404, "memory is off for this server (lar serve --no-memory)")
    return hub.runner.memory


def _record(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "type": r.type,
        "content": r.content,
        "source": r.source,
        "created": r.created,
        "supersedes": r.supersedes,
    }


@router.get("/memory")
async def memories(
    request: Request,
    q: str | None = Query(None, description="Search for this (else list the newest)."),
    limit: int = Query(50, ge=1, le=1000),
) -> dict[str, Any]:
    """Search memories (hybrid recall, with scores) or list the current ones, newest first."""
    hub = _hub(request)
    memory = _memory(hub)
    if q:
        found = await asyncio.to_thread(memory.search, q, limit, log_it=False)
        items = [{**_record(r.record), "score": round(r.score, 4)} for r in found]
    else:
        records = await asyncio.to_thread(memory.store.records)
        items = [_record(r) for r in reversed(records)][:limit]
    return {"memories": hub.mask(items)}


@router.delete("/memory/{memory_id}")
async def forget(memory_id: str, request: Request) -> dict[str, Any]:
    """Forget a memory: recall no longer finds it; the audit log keeps that it was forgotten."""
    from lar.errors import LarError

    memory = _memory(_hub(request))
    try:
        await asyncio.to_thread(memory.store.forget, memory_id)
    except LarError as exc:
        raise HTTPException(404, str(exc)) from None
    return {"forgotten": memory_id}


@router.get("/memory/verify")
async def verify(request: Request) -> dict[str, Any]:
    """Check the memory's hash chain: every change since each record was written is found."""
    memory = _memory(_hub(request))
    problems = await asyncio.to_thread(memory.store.verify)
    return {"ok": not problems, "problems": [to_dict(p) for p in problems]}


# --- schedules ---------------------------------------------------------------------------------


@router.get("/inbox")
async def inbox(
    request: Request,
    unread: bool = Query(False, description="Only what was not marked read."),
    limit: int = Query(50, ge=1, le=1000),
) -> dict[str, Any]:
    """What fired jobs delivered (reminders, results, denials), newest first."""
    from lar.scheduler import JobStore

    hub = _hub(request)
    store = JobStore(hub.config.home / "lar.db")
    try:
        items = await asyncio.to_thread(store.inbox, unread=unread, limit=limit)
    finally:
        store.close()
    return {"items": hub.mask([to_dict(i) for i in items])}


@router.get("/jobs")
async def jobs(request: Request) -> dict[str, Any]:
    """The scheduled jobs (not the finished one-offs), with their next due time."""
    from lar.scheduler import JobStore

    hub = _hub(request)
    store = JobStore(hub.config.home / "lar.db")
    try:
        found = await asyncio.to_thread(store.jobs)
        listed = [{**to_dict(j), "schedule": j.describe()} for j in found]
    finally:
        store.close()
    return {"jobs": hub.mask(listed)}


# --- roles -------------------------------------------------------------------------------------


def _roles(home: Path) -> list[dict[str, Any]]:
    from lar.roles import RoleFileError, installed_roles, role_health, runner_for

    out: list[dict[str, Any]] = []
    for file, role in installed_roles(home):
        if isinstance(role, RoleFileError):
            out.append({"name": file.parent.name, "error": str(role.problems[0])})
            continue
        try:
            out.append(role_health(runner_for(role, home)))
        except LarError as exc:
            out.append({"name": role.name, "version": role.spec.version, "error": str(exc)})
    return out


@router.get("/roles")
async def roles(request: Request) -> dict[str, Any]:
    """Installed deterministic roles (`lar role apply`): readiness, each capability's probe
    (AVAILABLE or UNAVAILABLE, and where its tools are routed), breakers and the last runs."""
    hub = _hub(request)
    found = await asyncio.to_thread(_roles, hub.config.home)
    return {"roles": hub.mask(found)}


# --- sessions, models, status ----------------------------------------------------------------


@router.post("/sessions/{session_id}/reset")
async def reset(session_id: str, request: Request) -> dict[str, Any]:
    """A fresh start for a session: its run state and last task note go; memories stay."""
    hub = _hub(request)
    memory = hub.runner.memory
    if memory is not None:
        await asyncio.to_thread(memory.for_session(session_id, hub.redactor.text).clear_working)
    return {"session": session_id, "reset": hub.reset(session_id)}


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    """Configured models (the router's candidates first) and which engine each runs on."""
    hub = _hub(request)
    config = hub.config
    out = []
    for name in config.model_names():
        m = config.model_named(name)
        out.append(
            {
                "name": name,
                "engine": m.engine,
                "model": m.model or m.package or m.path or name,
                "default": name == config.model,
                "candidate": name in config.candidates(),
            }
        )
    return {"models": hub.mask(out)}


@router.get("/status")
async def status(request: Request) -> dict[str, Any]:
    """What runs, what waits for the model (queue positions) and for a person."""
    hub = _hub(request)
    return hub.mask(hub.status())  # type: ignore[no-any-return]
