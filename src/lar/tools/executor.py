"""The one chokepoint every tool call passes through (T4, T5, T6, T8, T9).

lookup → allowlist → circuit breaker → validate → permission → run (timeout; network-class
errors retried) → normalize → clip. Failures never raise into the loop: they come back as a
``ToolResult`` whose ``error`` is ``{"error", "detail", "code"}``, so the model can read what went
wrong and correct itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import itertools
import json
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from lar.tools.base import NotPossibleHere, Permission, Tool, ToolArgumentError, ToolContext
from lar.tools.breaker import CircuitBreaker
from lar.tools.staging import CannotStage, Staged
from lar.types import Code, ToolCall, ToolError, ToolResult

_STRICTNESS = {"auto": 0, "auth": 1, "confirm": 2}

__all__ = [
    "ToolExecutor",
    "Approver",
    "DEFAULT_CLIP_CHARS",
    "DEFAULT_HOW_TO_ALLOW",
    "NOT_ALLOWED_BY_USER",
    "how_to_allow",
]

Approver = Callable[..., "bool | Awaitable[bool]"]
"""``(call, tool) -> bool``: asked before a ``confirm`` tool runs; True allows it. An approver
that also takes ``changes`` (``lar.tools.staging.Changes``, a keyword) is asked instead after a
staging tool (``Tool.stages``) ran on a copy of the workspace, with what the run would change;
True applies the changes. With no approver, or one whose ``never_allows`` attribute is True, a
staging tool runs on a copy too: a run that changed nothing gives its result, one that changed
something is refused and its output withheld. One that takes ``reasons`` gets the danger
warnings that made the call ask. An approver may be a coroutine function (the server's waits
for a person's answer)."""

MAX_NESTING = 8
DEFAULT_CLIP_CHARS = 3200  # ≈ 800 tokens at ~4 characters per token (T6)
NOT_ALLOWED_BY_USER = "the user did not allow this call"
"""A refused call's error where the user (or the lack of ``--yes``) said no."""


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def clip_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated: {len(text) - limit} more characters not shown]"


class ToolExecutor:
    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        allowlist: Iterable[str] | None = None,
        approver: Approver | None = None,
        clip_chars: int = DEFAULT_CLIP_CHARS,
        max_workers: int = 8,
        breaker: CircuitBreaker | None = None,
        permissions: dict[str, Permission] | None = None,
        credentials: dict[str, str] | None = None,
        retries: int = 2,
        retry_backoff_s: float = 0.2,
    ) -> None:
        self.tools: dict[str, Tool] = {}
        for t in tools:
            self.tools[t.name] = t
        self.allowlist = set(allowlist) if allowlist else None
        self.approver = approver
        self._previews = _takes(approver, "changes")
        self._reasons = _takes(approver, "reasons")
        self.clip_chars = clip_chars
        self._pool: ThreadPoolExecutor | None = None
        self._max_workers = max_workers
        self.breaker = breaker or CircuitBreaker()
        self.permissions = dict(permissions or {})
        self.floor: tuple[dict[str, Permission], Permission | None] | None = None
        """What ``tighten`` holds this executor to, kept so a sub-agent's can be held to it."""
        # An empty credential (an unset ${VAR:-}) is none: the tool is refused, saying so.
        self._credentials = {k: v for k, v in (credentials or {}).items() if v}
        self.retries = retries
        self.retry_backoff_s = retry_backoff_s

    def allowed(self, name: str) -> bool:
        return self.allowlist is None or name in self.allowlist

    def sibling(self, tools: Iterable[Tool], *, keep: bool = True) -> ToolExecutor:
        """An executor with the same approver, permissions, credentials and breaker, for
        ``tools`` added to this one's (``keep``) or instead of them; the added tools are
        allowed whatever the allowlist says (the agent kind adds them, not the model)."""
        added = list(tools)
        base = list(self.tools.values()) if keep else []
        allow = None  # without ``keep`` there are only the added tools
        if keep and self.allowlist is not None:
            allow = self.allowlist | {t.name for t in added}
        made = ToolExecutor(
            [*base, *added], allowlist=allow, approver=self.approver, clip_chars=self.clip_chars,
            max_workers=self._max_workers, breaker=self.breaker, permissions=self.permissions,
            credentials=self._credentials, retries=self.retries,
            retry_backoff_s=self.retry_backoff_s,
        )  # fmt: skip
        if self.floor is not None:
            made.tighten(self.floor[0], unknown=self.floor[1])
        return made

    def tighten(
        self, floor: Mapping[str, Permission], *, unknown: Permission | None = None
    ) -> None:
        """Never looser than ``floor`` (tool name → permission): each tool runs under the
        stricter of this executor's permission and the floor's; a tool the floor does not name
        is held to ``unknown`` (None: its own default). ``auth`` ranks between ``auto`` and
        ``confirm``: against ``confirm`` it asks, and the call then carries no credential."""
        self.floor = (dict(floor), unknown)
        for tool in self.tools.values():
            here = self.permission_of(tool)
            theirs = floor.get(tool.name, unknown or tool.permission)
            if _STRICTNESS.get(theirs, 2) > _STRICTNESS.get(here, 2):
                self.permissions[tool.name] = theirs

    def permission_of(self, tool: Tool) -> Permission:
        """The permission a call of ``tool`` runs under (config's ``tools.permissions`` first)."""
        return self.permissions.get(tool.name, tool.permission)

    def has_credential(self, name: str) -> bool:
        return name in self._credentials

    def visible(self) -> list[Tool]:
        """The tools shown to the model: allowlisted (T8, first layer), not cooling down and
        not down (an MCP server being restarted)."""
        return [
            t
            for t in self.tools.values()
            if self.allowed(t.name)
            and self.breaker.state(t.name) != "open"
            and (t.down is None or t.down() is None)
        ]

    @staticmethod
    def _fail(
        call: ToolCall, code: Code, error: str, detail: str, *, ran: bool = False
    ) -> ToolResult:
        err = ToolError(error=error, detail=detail, code=code)
        content = json.dumps({"error": error, "detail": detail, "code": code}, ensure_ascii=False)
        return ToolResult(call.id, call.name, content, ok=False, error=err, ran=ran)

    async def run(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        admitted = self._admit(call, ctx)
        if isinstance(admitted, ToolResult):
            return admitted
        tool, kwargs, permission, why = admitted
        # A staging tool under confirm runs on a copy first where the approver previews, or
        # where no one would say yes: a run that changed nothing (and that no danger check
        # doubted) then needs no one's yes, and one that changed something is asked about.
        stage = permission == "confirm" and tool.stages and tool.context_param is not None
        stage = stage and (self._previews or _never_allows(self.approver))
        if permission == "confirm" and not stage and not await self._approve(call, tool, why):
            return self._declined(call, tool, permission, why)
        if tool.context_param:
            confirmed = permission == "confirm" and not stage
            extra: dict[str, Any] = {"call_id": call.id, "stage": stage, "confirmed": confirmed}
            extra["call_tool"] = self._nested(call, ctx)
            if permission == "auth":
                extra["credential"] = self._credentials[tool.name]
            kwargs[tool.context_param] = dataclasses.replace(ctx, **extra)
        outcome = await self._call(call, tool, kwargs)
        if isinstance(outcome, CannotStage):  # nothing ran: ask first, as without a preview
            if not await self._approve(call, tool, why):
                return self._declined(call, tool, permission, why)
            kwargs[str(tool.context_param)] = dataclasses.replace(
                kwargs[str(tool.context_param)], stage=False
            )
            outcome = await self._call(call, tool, kwargs)
        if isinstance(outcome, ToolResult):
            return outcome
        value = outcome
        if isinstance(value, Staged):
            applied = await self._apply(call, tool, value, why)
            if isinstance(applied, ToolResult):
                return applied
            value = applied
        self.breaker.record(tool.name, ok=True)
        shown = tool.clip(value) if tool.clip else value
        content = clip_text(_to_text(shown), self.clip_chars)
        return ToolResult(call.id, call.name, content, ok=True, value=value)

    def _nested(
        self, parent: ToolCall, ctx: ToolContext
    ) -> Callable[[str, dict[str, Any]], Awaitable[ToolResult]]:
        """``ToolContext.call_tool`` for a call: each nested call is admitted, approved and run
        like one from the model, under an id of its own; nesting deeper than ``MAX_NESTING`` is
        refused (a skill that calls itself through others)."""
        depth = parent.id.count("/") + 1
        count = itertools.count(1)

        async def call_tool(name: str, arguments: dict[str, Any]) -> ToolResult:
            sub = ToolCall(id=f"{parent.id}/{next(count)}", name=name, arguments=arguments)
            if depth > MAX_NESTING:
                return self._fail(
                    sub,
                    Code.REFUSED,
                    "nested too deep",
                    f"more than {MAX_NESTING} levels of "
                    f"tools calling tools (from {parent.name}); a skill is calling itself",
                )
            return await self.run(sub, ctx)

        return call_tool

    def _admit(
        self, call: ToolCall, ctx: ToolContext
    ) -> tuple[Tool, dict[str, Any], Permission, list[str]] | ToolResult:
        """lookup → allowlist → breaker → validate → danger → credential: the tool, its
        arguments, the permission that applies and why it asks, or the refusal the model
        reads."""
        tool = self.tools.get(call.name)
        if tool is None or not self.allowed(call.name):
            names = ", ".join(t.name for t in self.visible()) or "none"
            code = Code.UNKNOWN_TOOL if tool is None else Code.NOT_ALLOWED
            return self._fail(
                call, code, f"no tool named {call.name!r}", f"available tools: {names}"
            )
        if not self.breaker.allow(tool.name):
            wait = self.breaker.retry_in(tool.name)
            return self._fail(
                call,
                Code.CIRCUIT_OPEN,
                f"{tool.name} is unavailable",
                f"it failed {self.breaker.threshold} times in a row; retry in {wait:.0f}s "
                "or do without it",
            )
        try:
            kwargs = tool.validate(call.arguments)
        except ToolArgumentError as exc:
            return self._fail(call, Code.INVALID_ARGUMENTS, "invalid arguments", str(exc))
        permission = self.permissions.get(tool.name, tool.permission)
        why: list[str] = []
        if tool.danger is not None:
            verdict = tool.danger(kwargs, ctx)
            if verdict.level == "refuse":  # hard line: not even --yes or a policy runs these
                return self._fail(
                    call,
                    Code.REFUSED,
                    "refused: this is never run",
                    "; ".join(verdict.reasons) + ". Do not try a variant of it.",
                )
            if verdict.level == "confirm":
                why = list(verdict.reasons)
                if permission == "auto":
                    permission = "confirm"  # a policy may trust the tool, not every command
        if permission == "auth" and tool.name not in self._credentials:
            return self._fail(
                call,
                Code.DENIED,
                f"{tool.name} needs a credential",
                f"no credential is configured for it (tools.credentials.{tool.name} in "
                "config.yaml); answer without it",
            )
        return tool, kwargs, permission, why

    def _declined(
        self, call: ToolCall, tool: Tool, permission: Permission, why: list[str], ran: str = ""
    ) -> ToolResult:
        """The refusal the model reads; ``ran``: what a run on a copy would have changed."""
        because = f": it {'; '.join(why)}" if why else ""
        copy = (
            f": run on a copy of the workspace, it {ran}. Nothing was applied and its output "
            "is withheld"
            if ran
            else ""
        )
        return self._fail(
            call,
            Code.DENIED,
            NOT_ALLOWED_BY_USER,
            f"{tool.name} needs confirmation ({permission}){because}{copy}; do not retry it, "
            "answer without it or explain what you need. To allow it, the user can "
            f"{how_to_allow(self.approver)}.",
        )

    async def _call(
        self, call: ToolCall, tool: Tool, kwargs: dict[str, Any]
    ) -> Any | ToolResult | CannotStage:
        """The tool's value, or the failure the model reads, or why it could not stage."""
        try:
            return await self._invoke_with_retries(tool, kwargs)
        except CannotStage as exc:
            return exc
        except NotPossibleHere as exc:
            return self._fail(call, Code.NOT_POSSIBLE, f"{tool.name} cannot work here", str(exc))
        except TimeoutError:
            self.breaker.record(tool.name, ok=False)
            return self._fail(
                call,
                Code.TIMEOUT,
                "tool timed out",
                f"{tool.name} did not finish in {tool.timeout_s:g}s",
                ran=True,
            )
        except Exception as exc:  # a tool's own failure is data for the model, not a crash
            if not isinstance(exc, _CALLERS_FAULT):
                self.breaker.record(tool.name, ok=False)
            return self._fail(
                call,
                Code.TOOL_ERROR,
                f"{tool.name} failed",
                f"{type(exc).__name__}: {exc}",
                ran=not isinstance(exc, PermissionError),
            )

    async def _apply(
        self, call: ToolCall, tool: Tool, staged: Staged, why: list[str]
    ) -> Any | ToolResult:
        """Ask with what the staged run would change (an approver that does not preview is
        asked plainly); apply it on a yes, else drop the copy. A run that changed nothing, and
        that no danger check doubted (``why``), asks no one: it could not change anything."""
        if staged.changes.empty and not why:
            return await asyncio.to_thread(staged.apply)
        extra = {"changes": staged.changes} if self._previews else {}
        try:
            approved = await self._ask(call, tool, why, **extra)
        except BaseException:
            await asyncio.to_thread(staged.discard)
            raise
        if not approved:
            await asyncio.to_thread(staged.discard)
            if not extra:  # asked plainly (or no one to ask): the usual refusal, and what it did
                return self._declined(call, tool, "confirm", why, staged.changes.summary())
            return self._fail(
                call,
                Code.DENIED,
                "the user did not apply this call's changes",
                f"{tool.name} ran on a copy of the workspace; it {staged.changes.summary()}. "
                "Nothing was applied and its output is withheld; do not retry it, answer "
                "without it or ask what the user wants",
            )
        try:
            return await asyncio.to_thread(staged.apply)
        except OSError as exc:
            return self._fail(
                call,
                Code.TOOL_ERROR,
                f"{tool.name}'s changes could not all be applied",
                f"{type(exc).__name__}: {exc}; `lar undo` puts the workspace back as it was",
                ran=True,
            )

    async def _approve(self, call: ToolCall, tool: Tool, why: list[str]) -> bool:
        return await self._ask(call, tool, why)

    async def _ask(self, call: ToolCall, tool: Tool, why: list[str], **extra: Any) -> bool:
        if self.approver is None:
            return False
        if self._reasons:
            extra["reasons"] = list(why)
        answer = self.approver(call, tool, **extra)
        if inspect.isawaitable(answer):
            answer = await answer
        return bool(answer)

    async def _invoke_with_retries(self, tool: Tool, kwargs: dict[str, Any]) -> Any:
        """Retries only network-class failures; anything else may have had effects already."""
        for attempt in range(self.retries + 1):
            try:
                return await self._invoke(tool, kwargs)
            except Exception as exc:
                if attempt == self.retries or not _network_error(exc):
                    raise
            await asyncio.sleep(self.retry_backoff_s * (2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _invoke(self, tool: Tool, kwargs: dict[str, Any]) -> Any:
        if tool.is_async:
            return await asyncio.wait_for(tool.fn(**kwargs), tool.timeout_s)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix="lar-tool")
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._pool, partial(tool.fn, **kwargs))
        return await asyncio.wait_for(future, tool.timeout_s)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


MODEL_HINTS = (
    "or do without it",
    "Do not try a variant of it.",
    "answer without it",
    "do not retry it, answer without it or explain what you need",
    "do not retry it, answer without it or ask what the user wants",
)
"""What a refusal's detail tells the model to do next (never for the user's eyes)."""


def data_of_failure(detail: str) -> str:
    """A failed call's detail without the hints addressed to the model."""
    for hint in sorted(MODEL_HINTS, key=len, reverse=True):
        detail = detail.replace(hint, "")
    return detail


_CALLERS_FAULT = (
    PermissionError,
    FileNotFoundError,
    FileExistsError,
    IsADirectoryError,
    NotADirectoryError,
)
"""Refusals of a call (a policy said no, a path or value was wrong): the call's fault, not a
sign the tool is broken, so they never open its circuit breaker and block the next, fitting
call."""


DEFAULT_HOW_TO_ALLOW = "allow it when Lar asks, or change its permission in config.yaml"


def how_to_allow(approver: object) -> str:
    """The approver's ``how_to_allow`` (on it, or on the object of a bound method), else the
    default: each front end says how its user gives a yes."""
    for owner in (approver, getattr(approver, "__self__", None)):
        how = getattr(owner, "how_to_allow", None)
        if isinstance(how, str):
            return how
    return DEFAULT_HOW_TO_ALLOW


def _never_allows(approver: Approver | None) -> bool:
    """No approver, or one that says it refuses every call (``never_allows``: ``lar run``
    without ``--yes``)."""
    return approver is None or getattr(approver, "never_allows", False) is True


def _takes(approver: Approver | None, keyword: str) -> bool:
    """Whether ``approver`` accepts ``keyword=`` (``changes``: it then sees previews of staged
    runs; ``reasons``: the danger warnings)."""
    if approver is None:
        return False
    try:
        params = inspect.signature(approver).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == keyword or p.kind is p.VAR_KEYWORD for p in params)


def _network_error(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError | socket.gaierror):
        return True
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is a dependency
        return False
    return isinstance(exc, httpx.TransportError)


def tool_names(tools: Sequence[Tool]) -> dict[str, list[str]]:
    """name → ordered parameter names, as the protocol parser wants them."""
    return {t.name: list(t.parameters.get("properties", {})) for t in tools}


def offered_for(tools: Sequence[Tool], request: str) -> list[Tool]:
    """The tools listed for ``request``: every tool not gated by ``Tool.offered``, then the
    gated ones whose gate the request passes — last, so the listing's fixed part is the same
    for every request (a prompt cache keeps it) and a request no gate fits sees exactly it."""
    always = [t for t in tools if t.offered is None]
    return [*always, *(t for t in tools if t.offered is not None and t.offered(request))]
