"""``lar mcp serve`` (I5): Lar's tools and its memory for other MCP clients, with the official
SDK's low-level ``Server`` (stdio, or Streamable HTTP bound to loopback).

Every call goes through the session's executor, as the model's calls do: allowlist, validation,
danger checks, the sandbox, timeout, breaker, clipping. Nobody is there to answer a
confirmation, so a tool that asks first runs only when the person who started the server named
it (``--allow``); otherwise the call is refused with how to allow it. Such tools are annotated
(``destructive_hint``, and ``_meta["lar/permission"] = "confirm"``) so a client can tell its own
user before calling. A tool that needs a credential is listed only when one is configured.
Memory is two tools: ``lar_memory_search`` and ``lar_memory_add`` (through the write policy,
like anything the agent is told; stored with source ``mcp``, refused when it is an instruction
to the agent, and shown to later runs as an MCP client's note, never as the user's words). Over
HTTP every request carries the server token (lar.server.token), as ``lar serve``'s do.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from lar import __version__
from lar.tools import Tool, ToolContext
from lar.types import Code, ToolCall

if TYPE_CHECKING:
    from lar.agents import Agent, Runner, Session
    from lar.config import LarConfig

__all__ = ["build_mcp_server", "mcp_http_app", "exposed_tools", "MEMORY_TOOLS"]

MEMORY_TOOLS = ("lar_memory_search", "lar_memory_add")
_MEMORY_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "lar_memory_search": (
        "Search Lar's long-term memory (what its user told it) for a question or keywords.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look for."}},
            "required": ["query"],
        },
    ),
    "lar_memory_add": (
        "Store one short fact about the user in Lar's long-term memory (its write policy "
        "refuses secrets and things that will not stay true).",
        {
            "type": "object",
            "properties": {
                "fact": {"type": "string", "description": "One short sentence."},
                "type": {"type": "string", "enum": ["fact", "preference"], "default": "fact"},
            },
            "required": ["fact"],
        },
    ),
}


AGENT_ONLY = frozenset(
    {"ask_user", "update_working_checkpoint", "memory_search", "start_long_term_update"}
)
"""Tools that only make sense inside an agent's run (asking its user, its task notes) or that
the memory tools below replace."""


def exposed_tools(session: Session) -> list[Tool]:
    """The session's allowlisted tools but the agent-only ones, interactive ones and those that
    need a credential none is set for."""
    executor = session.executor
    return [
        t
        for t in executor.visible()
        if t.name not in AGENT_ONLY
        and not t.interactive
        and (executor.permission_of(t) != "auth" or executor.has_credential(t.name))
    ]


class _Allowed:
    """The approver of MCP calls: yes only to the tools named by ``--allow``, and never to a
    call the danger check flagged (``rm -r``, ``curl | sh``, a write to a git hook or a shell
    rc file): those need a person, and no one is there to ask."""

    how_to_allow = "start `lar mcp serve --allow TOOL` to let MCP clients run it unasked"

    def __init__(self, allowed: Iterable[str]) -> None:
        self.allowed = frozenset(allowed)
        self.flagged: dict[str, list[str]] = {}
        """Call id → the danger check's reasons, for calls refused because of them."""

    def __call__(self, call: ToolCall, tool: Any, reasons: list[str] | None = None) -> bool:
        if reasons:
            self.flagged[call.id] = list(reasons)
            return False
        return call.name in self.allowed


def build_mcp_server(
    runner: Runner, agent: Agent, *, allowed: Iterable[str] = (), workspace: str | None = None
) -> Any:
    """An ``mcp.server.lowlevel.Server`` over ``agent``'s tools and ``runner``'s memory."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    approver = _Allowed(allowed)
    allow = approver.allowed
    session = runner.session(agent, approver=approver, workspace=workspace)
    tools = {t.name: t for t in exposed_tools(session)}

    def listing(tool: Tool) -> Any:
        permission = session.executor.permission_of(tool)
        asks = permission != "auto"
        return types.Tool(
            name=tool.name,
            description=tool.description + (" (asks Lar's user first)" if asks else ""),
            input_schema=tool.parameters,
            annotations=types.ToolAnnotations(
                read_only_hint=tool.read_only,
                destructive_hint=asks and not tool.read_only,
                idempotent_hint=tool.idempotent,
            ),
            meta={"lar/permission": permission, "lar/allowed": tool.name in allow},
        )

    async def list_tools(ctx: Any, params: Any) -> Any:
        listed = [listing(t) for t in tools.values()]
        if session.memory is not None:
            listed += [
                types.Tool(
                    name=name,
                    description=description,
                    input_schema=schema,
                    annotations=types.ToolAnnotations(read_only_hint=name.endswith("search")),
                    meta={"lar/permission": "auto"},
                )
                for name, (description, schema) in _MEMORY_SCHEMAS.items()
            ]
        return types.ListToolsResult(tools=listed)

    def result(text: str, *, error: bool = False) -> Any:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=error
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        name, arguments = params.name, dict(params.arguments or {})
        if name in MEMORY_TOOLS:
            return _memory_call(session, name, arguments, result)
        if name not in tools:
            return result(f"unknown tool {name!r}", error=True)
        call = ToolCall(id="mcp_" + secrets.token_hex(4), name=name, arguments=arguments)
        context = ToolContext(
            workspace=session.workspace,
            home=session.runner.config.home,
            run_id="mcp",
            memory=session.memory,
            redact=session.runner.redactor.text,
            sandbox=session.runner.config.tools.sandbox,
        )
        done = await session.executor.run(call, context)
        if done.ok:
            return result(done.content)
        flagged = approver.flagged.pop(call.id, None)
        if flagged:
            return result(
                f"{name} was not run: it {'; '.join(flagged)}. Such a call needs a yes from "
                "Lar's user, which an MCP client cannot give (--allow does not cover it)",
                error=True,
            )
        if done.error is not None and done.error.code == Code.DENIED:
            return result(
                f"{name} asks Lar's user first and was not run; {approver.how_to_allow}",
                error=True,
            )
        detail = done.error.detail if done.error is not None else done.content
        return result(detail or done.content, error=True)

    return Server("lar", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


def _memory_call(session: Session, name: str, arguments: dict[str, Any], result: Any) -> Any:
    memory = session.memory
    if memory is None:
        return result("Lar's memory is off", error=True)
    if name == "lar_memory_search":
        found = memory.search(str(arguments.get("query", "")))
        if not found:
            return result("nothing relevant remembered")
        return result("\n".join(f"- {r.record.content} ({r.record.id})" for r in found))
    fact = str(arguments.get("fact", "")).strip()
    kind = arguments.get("type", "fact")
    if not fact or kind not in ("fact", "preference"):
        return result("give fact (one sentence) and type fact or preference", error=True)
    written = memory.write(fact, kind, source="mcp")
    if written.action == "refused":
        return result(f"not stored: {written.reason}", error=True)
    return result(f"{written.action}: {written.memory_id}")


def mcp_http_app(server: Any, config: LarConfig) -> Any:
    """``server`` over Streamable HTTP on loopback, behind the same guard as ``lar serve``:
    every request carries the home's token (``Authorization: Bearer``), a foreign ``Host`` is
    refused (DNS rebinding), a body is bounded."""
    from lar.server.security import Guard
    from lar.server.token import server_token

    token = server_token(config)
    assert token is not None  # made when missing
    app = server.streamable_http_app(host="127.0.0.1")
    return Guard(app, token=token, host="127.0.0.1", max_body=config.server.max_body_kb * 1024)
