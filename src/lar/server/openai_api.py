"""The OpenAI-compatible face (I2): ``POST /v1/chat/completions`` and ``GET /v1/models``.

Any OpenAI client or chat UI talks to the agent, tools, memory and all. The client's messages are
the conversation, as sent: its system message replaces Lar's instructions (the tool listing
stays), its earlier turns are the history, its last user message is the request. A session id
(the ``X-Lar-Session`` header, else the ``user`` field) ties requests to one conversation's state
and memory. What the agent did with its tools is shown in the content as quoted lines (``> ⚙ …``)
before the answer, so a plain client sees it; such lines in a returned assistant message are
dropped again. ``X-Lar-Tool-Activity: off`` leaves them out. The full typed events are at
``/api/runs/{id}/events`` (the ``X-Lar-Run`` response header names the run).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict

from lar.server.hub import Hub
from lar.server.runs import RunLog
from lar.types import Message, ToolCall

__all__ = ["router", "model_ids", "activity_line"]

router = APIRouter(prefix="/v1", tags=["OpenAI-compatible"])

AGENT = "lar"
_MARKS = ("> ⚙ ", "> ✓ ", "> ✗ ", "> ⏸ ")


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = AGENT
    messages: list[dict[str, Any]]
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    user: str | None = None


def _hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def model_ids(hub: Hub) -> dict[str, str]:
    """Model id → the configured model it runs on ("" for ``lar``: the router chooses)."""
    ids = {AGENT: ""}
    for name in hub.config.model_names():
        ids[f"{AGENT}/{name}"] = name
    return ids


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    """The agent under each configured model (``lar``: the router picks one per request)."""
    hub = _hub(request)
    created = int(hub.started)
    data = [
        {"id": mid, "object": "model", "created": created, "owned_by": "lar"}
        for mid in model_ids(hub)
    ]
    return {"object": "list", "data": data}


def _content(message: dict[str, Any], index: int) -> str:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise _bad(
                    f"messages[{index}]: content of type {kind!r} is not supported (text only)"
                )
            parts.append(str(part.get("text", "")))
        return "".join(parts)
    raise _bad(f"messages[{index}].content must be a string or a list of text parts")


def strip_activity(text: str) -> str:
    """An assistant message without the tool-activity lines this server put before it."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and (lines[i].startswith(_MARKS) or (i and not lines[i].strip())):
        i += 1
    return "\n".join(lines[i:]) if i else text


def conversation(messages: list[dict[str, Any]]) -> tuple[str, list[Message], str]:
    """(request, history, system) from a client's messages."""
    if not messages:
        raise _bad("messages must not be empty")
    system: list[str] = []
    history: list[Message] = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role in ("system", "developer"):
            system.append(_content(m, i))
        elif role == "user":
            history.append(Message("user", _content(m, i)))
        elif role == "assistant":
            calls = _calls(m, i)
            history.append(Message("assistant", strip_activity(_content(m, i)), tool_calls=calls))
        elif role == "tool":
            call_id = m.get("tool_call_id")
            if call_id is not None and not isinstance(call_id, str):
                raise _bad(f"messages[{i}].tool_call_id must be a string")
            history.append(Message("tool", _content(m, i), tool_call_id=call_id))
        else:
            raise _bad(f"messages[{i}].role must be system, user, assistant or tool (got {role!r})")
    last = history.pop() if history else None
    if last is None or last.role != "user" or not last.content.strip():
        raise _bad("the last message must be the user's, with text")
    return last.content, history, "\n\n".join(s for s in system if s.strip())


def _calls(message: dict[str, Any], index: int) -> list[ToolCall]:
    """An assistant message's ``tool_calls``, each checked: a list of objects with a
    ``function`` that has a ``name`` (string) and ``arguments`` (JSON text or an object)."""
    raw = message.get("tool_calls") or []
    if not isinstance(raw, list):
        raise _bad(f"messages[{index}].tool_calls must be a list")
    calls = []
    for j, call in enumerate(raw):
        where = f"messages[{index}].tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise _bad(f"{where}: needs function.name (a string)")
        call_id = call.get("id", f"call_{index}_{j}")
        if not isinstance(call_id, str):
            raise _bad(f"{where}.id must be a string")
        calls.append(ToolCall(call_id, name, _args(function, where)))
    return calls


def _args(function: dict[str, Any], where: str) -> dict[str, Any]:
    raw = function.get("arguments") or "{}"
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        raise _bad(f"{where}.function.arguments: not JSON ({exc})") from None
    return value if isinstance(value, dict) else {"value": value}


def _bad(message: str) -> HTTPException:
    return HTTPException(400, message)


def activity_line(event: dict[str, Any]) -> str | None:
    """A tool event as one quoted line a person can read, or None."""
    kind = event.get("type")
    if kind == "tool_call":
        call = event["call"]
        args = json.dumps(call.get("arguments", {}), ensure_ascii=False)
        return f"> ⚙ {call['name']} {_short(args, 160)}\n"
    if kind == "tool_result":
        result = event["result"]
        mark = "✓" if result.get("ok") else "✗"
        return f"> {mark} {result['name']}: {_short(result.get('content', ''), 160)}\n"
    if kind == "waiting_user":
        a = event["approval"]
        return f"> ⏸ {a['tool']} waits for your approval ({a['id']}, see /api/approvals)\n"
    return None


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@router.post("/chat/completions")
async def chat_completions(body: ChatRequest, request: Request) -> Any:
    """A chat completion by the agent (``stream: true`` for server-sent chunks)."""
    hub = _hub(request)
    ids = model_ids(hub)
    if body.model not in ids:
        raise HTTPException(
            404, f"model {body.model!r} does not exist; see /v1/models ({', '.join(ids)})"
        )
    text, history, system = conversation(body.messages)
    session = request.headers.get("x-lar-session") or body.user or None
    show = request.headers.get("x-lar-tool-activity", "on").lower() not in ("off", "0", "no")
    run = hub.start(text, session_id=session, history=history, system=system, model=ids[body.model])
    headers = {"X-Lar-Run": run.id, "X-Lar-Session": run.session}
    if body.stream:
        usage = bool((body.stream_options or {}).get("include_usage"))
        return StreamingResponse(
            _chunks(hub, run, body.model, show, usage),
            media_type="text/event-stream",
            headers={**headers, "Cache-Control": "no-cache"},
        )
    said = []
    final: dict[str, Any] | None = None
    async for event in run.follow(idle_s=3600):
        if event is None:
            continue
        line = activity_line(event) if show else None
        if line:
            said.append(line)
        if event.get("type") == "final":
            final = event
    if final is None or run.status != "succeeded":
        raise HTTPException(502, f"the run failed: {run.error or 'no answer'} (run {run.id})")
    content = ("".join(said) + "\n" if said else "") + final["text"]
    return JSONResponse(
        {
            "id": f"chatcmpl-{run.id}",
            "object": "chat.completion",
            "created": int(run.created),
            "model": body.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": _finish(final),
                }
            ],
            "usage": _usage(final),
            "lar": {"run": run.id, "session": run.session, "stop_reason": final["stop_reason"]},
        },
        headers=headers,
    )


def _finish(final: dict[str, Any]) -> str:
    return "stop" if final["stop_reason"] == "answer" else "length"


def _usage(final: dict[str, Any]) -> dict[str, int]:
    u = final.get("usage") or {}
    prompt, completion = int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


async def _chunks(hub: Hub, run: RunLog, model: str, show: bool, usage: bool) -> AsyncIterator[str]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        data = {
            "id": f"chatcmpl-{run.id}",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"  # events come masked

    yield chunk({"role": "assistant", "content": ""})
    streamed = ""
    final: dict[str, Any] | None = None
    async for event in run.follow():
        if event is None:
            yield ": keep-alive\n\n"
            continue
        kind = event.get("type")
        if kind == "text_delta":
            streamed += event["text"]
            yield chunk({"content": event["text"]})
        elif kind == "final":
            final = event
        elif show:
            line = activity_line(event)
            if line:
                lead = "\n" if streamed and not streamed.endswith("\n") else ""
                streamed = ""  # the next text is a new part
                yield chunk({"content": lead + line})
    if final is None:
        err = {"message": f"the run failed: {run.error or 'no answer'}", "type": "server_error"}
        yield f"data: {json.dumps({'error': hub.mask(err)})}\n\n"
    else:
        rest = _rest(streamed, final["text"])
        if rest:
            yield chunk({"content": rest})
        yield chunk({}, _finish(final))
        if usage:
            data = {
                "id": f"chatcmpl-{run.id}",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": _usage(final),
            }
            yield f"data: {json.dumps(data)}\n\n"
    yield "data: [DONE]\n\n"


def _rest(streamed: str, final: str) -> str:
    """What the client still needs after ``streamed`` to have the checked answer: the rest of it,
    or (when the answer check changed what was streamed) the whole answer after a blank line."""
    if final.startswith(streamed):
        return final[len(streamed) :]
    if streamed.strip() == final.strip():
        return ""
    return ("\n\n" if streamed else "") + final
