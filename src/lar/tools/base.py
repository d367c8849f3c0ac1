"""Typed tools (T1): a function's signature and docstring become a validator and a JSON Schema."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from lar.errors import ToolDefinitionError
from lar.registry import Registry
from lar.types import ToolResult, ToolSpec

__all__ = [
    "Tool",
    "held_back",
    "tool",
    "ToolContext",
    "ToolArgumentError",
    "NotPossibleHere",
    "SchemaTool",
    "ToolRegistry",
    "Permission",
    "Determinism",
]

Permission = Literal["auto", "confirm", "auth"]
Determinism = Literal["deterministic", "seeded", "nondeterministic"]
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


@dataclass(slots=True)
class ToolContext:
    """Run context a tool can ask for by annotating a parameter with this type.

    The parameter is injected by the executor and never shown to the model.
    """

    workspace: Path
    home: Path | None = None
    run_id: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    ask_user: Callable[[str], str | None] | None = None
    credential: str | None = None
    """For ``auth`` tools: the configured credential of the tool being run."""
    sandbox: Any = None
    """``lar.config.SandboxSettings`` for code tools (None: the defaults)."""
    memory: Any = None
    """``lar.memory.agent_memory.AgentMemory`` when the agent has memory (None: off)."""
    call_id: str = ""
    """The call being run; with ``run_id`` it is ``idempotency_key``."""
    redact: Callable[[str], str] = field(default=lambda text: text)
    """Masks secrets (``lar.redact``) in what a tool stores, such as notes."""
    confirmed: bool = False
    """The user (or ``--yes``) allowed this very call: set by the executor for a call under
    ``confirm`` that was approved, e.g. a read outside the workspace."""
    call_tool: Callable[[str, dict[str, Any]], Awaitable[ToolResult]] | None = None
    """Runs another tool through the same executor, with its allowlist, validation, approval
    and breaker (a skill's steps, lar.skills); set by the executor for the call being run."""
    timezone: str | None = None
    """The user's IANA time zone (``scheduler.timezone``); None: this machine's."""
    language: str | None = None
    """The request's language (ISO 639-1) where it is surely not English, else None: a tool
    may name what it found in it too (``calendar``'s weekday)."""
    stage: bool = False
    """For ``stages`` tools: run against a copy of the workspace and return
    ``lar.tools.staging.Staged`` (or raise ``CannotStage`` before running)."""


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema; the message is meant for the model."""


class NotPossibleHere(Exception):
    """Raised by a tool for something Lar cannot do yet (a reminder before there is a
    scheduler); nothing ran. The message is for the user as it stands: what cannot be done and
    what would make it possible."""


class ToolRegistry(Registry["Tool"]):
    kind = "tool"


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*\*{0,2}(\w+)\*{0,2}\s*(\([^)]*\))?\s*:\s*(.+)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.+)$")


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {param: description}); Google and Sphinx styles."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    in_args = False
    last: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            params[sphinx.group(1)] = sphinx.group(2).strip()
            continue
        if in_args:
            m = _ARG_LINE.match(line)
            if m:
                last = m.group(1)
                params[last] = m.group(3).strip()
            elif line.strip() and last and line.startswith((" ", "\t")):
                params[last] += " " + line.strip()
            elif re.match(r"^\s*\w[\w ]*:\s*$", line):
                in_args = False  # next section (Returns:, Raises: …)
            continue
        if line.lstrip().startswith(":"):
            continue
        desc.append(line)
    return "\n".join(desc).strip(), params


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def held_back(request: str) -> bool:
    """A ``Tool.offered`` gate that lists the tool for no request: it runs only when the model
    calls it by name (``lar.agents.calls.unlisted``), its permission asked as always. Only
    tools so gated run unlisted; a tool a request's gate left out (``calendar`` for a request
    with no date) stays out. ``file_move``'s and ``file_delete``'s: listed for every request
    naming a file, they changed the 1.5B's answers to requests *about* a file, while for a
    deletion the model calls ``file_delete`` unlisted (docs/evals.md)."""
    del request
    return False


class Tool:
    """A callable tool. Calling the object calls the wrapped function unchanged."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        permission: Permission = "auto",
        timeout_s: float = 10.0,
        determinism: Determinism = "deterministic",
        clip: Callable[[Any], Any] | None = None,
        danger: Callable[[dict[str, Any], ToolContext], Any] | None = None,
        interactive: bool = False,
        broad: bool = False,
        reads_outside: bool = False,
        idempotent: bool = False,
        stages: bool = False,
        read_only: bool = False,
        replaces: tuple[str, str] | None = None,
    ) -> None:
        self.fn = fn
        self.down: Callable[[], str | None] | None = None
        """Why the tool cannot run now (its MCP server is down), or None: while it says so the
        tool is not offered to the model (``ToolExecutor.visible``)."""
        self.offered: Callable[[str], bool] | None = None
        """Whether a request's text shows the tool is for it (a date for ``calendar``), or
        None: listed for every request. A tool so gated is listed after all the others, so the
        listing's fixed part stays the same (and cached) for every request
        (``lar.tools.executor.offered_for``)."""
        self.replaces = replaces
        """The names of the (old, new) text arguments of a tool that replaces text: what a call
        would delete is what is in ``old`` and not in ``new`` (lar.agents.edit_policies)."""
        self.stages = stages
        """Can run against a copy of the workspace first (``ToolContext.stage``): under
        ``confirm`` the user then approves what the run would change, not the command text."""
        self.read_only = read_only
        """Cannot change anything (a read, a lookup, a computation): a call to it may be given
        less than the model wrote (an argument it does not take is dropped), and runs on the
        last turn with no model call left after it. Implies ``idempotent``."""
        self.idempotent = idempotent or read_only
        """Running it twice has the effect of running it once (reads, lookups, a tool that
        dedupes by ``ToolContext.idempotency_key``): after a crash cut it off, it runs again;
        any other tool's call is asked about instead (at most once)."""
        self.reads_outside = reads_outside
        """Returns content from outside the conversation (files, pages, command output): data,
        never instructions, so it cannot by itself support a memory or the next task's note."""
        self.broad = broad
        """Fits requests its description cannot name (shell, files, code): never judged
        off-topic by the request's words (lar.calling.relevance)."""
        self.interactive = interactive
        """Waits for a person (the task is ``waiting_user`` meanwhile)."""
        self.danger = danger
        """Assesses validated arguments (lar.tools.danger.Verdict): refuse, confirm or ok."""
        self.name = name or fn.__name__
        if not _NAME_RE.match(self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} must start with a letter or _ and contain only "
                "letters, digits, _ . - (max 64 chars)"
            )
        if permission not in typing.get_args(Permission):
            raise ToolDefinitionError(
                f"tool {self.name!r}: permission {permission!r} is not one of auto, confirm, auth"
            )
        if timeout_s <= 0:
            raise ToolDefinitionError(f"tool {self.name!r}: timeout_s must be > 0")
        doc_desc, param_docs = _parse_docstring(fn.__doc__)
        self.description = (description or doc_desc or self.name).strip()
        self.permission: Permission = permission
        self.timeout_s = timeout_s
        self.determinism: Determinism = determinism
        self.clip = clip
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param: str | None = None
        self._validator = self._build_validator(param_docs)
        self.parameters: dict[str, Any] = _strip_titles(self._validator.model_json_schema())
        self.parameters.setdefault("properties", {})

    def _build_validator(self, param_docs: dict[str, str]) -> type[BaseModel]:
        try:
            hints = typing.get_type_hints(self.fn)
        except Exception as exc:  # unresolved forward refs: name them
            raise ToolDefinitionError(
                f"tool {self.name!r}: cannot resolve type hints: {exc}"
            ) from exc
        fields: dict[str, Any] = {}
        from pydantic import Field

        for pname, param in inspect.signature(self.fn).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(f"tool {self.name!r}: *args/**kwargs are not supported")
            annotation = hints.get(pname, Any)
            if annotation is ToolContext:
                self.context_param = pname
                continue
            default = ... if param.default is param.empty else param.default
            fields[pname] = (annotation, Field(default, description=param_docs.get(pname)))
        try:
            return create_model(
                f"{self.name.replace('.', '_').replace('-', '_')}_args",
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
        except Exception as exc:
            raise ToolDefinitionError(f"tool {self.name!r}: unsupported signature: {exc}") from exc

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Return validated keyword arguments or raise ToolArgumentError explaining each problem."""
        try:
            model = self._validator.model_validate(arguments)
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
                if err["type"] == "extra_forbidden":
                    problems.append(f"unknown argument {loc!r}")
                elif err["type"] == "missing":
                    problems.append(f"missing required argument {loc!r}")
                else:
                    problems.append(f"argument {loc!r}: {err['msg']} (got {err.get('input')!r})")
            raise ToolArgumentError(
                "; ".join(problems) + f". Expected: {self.signature()}"
            ) from None
        return {k: getattr(model, k) for k in type(model).model_fields}

    @property
    def harmless(self) -> bool:
        """Cannot change anything and runs without asking: what a call to it may be given less
        of than the model wrote, or run with no model call left after it."""
        return self.read_only and self.permission == "auto"

    def signature(self) -> str:
        from lar.tools.signature import signature

        return signature(self)

    @property
    def spec(self) -> ToolSpec:
        """The data an engine gets for this tool (lar.types.ToolSpec)."""
        return ToolSpec(self.name, self.description, self.parameters)

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, permission={self.permission!r})"


class SchemaTool(Tool):
    """A tool described by a JSON Schema rather than a Python signature (eval suites; tools
    that live elsewhere). Arguments are checked with ``jsonschema``; ``fn`` gets them as
    keyword arguments."""

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[..., Any],
        *,
        permission: Permission = "auto",
        timeout_s: float = 10.0,
        broad: bool = False,
    ) -> None:
        import jsonschema

        if not _NAME_RE.match(name):
            raise ToolDefinitionError(
                f"tool name {name!r} must start with a letter or _ and contain only "
                "letters, digits, _ . - (max 64 chars)"
            )
        schema = {"type": "object", "properties": {}, **parameters}
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ToolDefinitionError(
                f"tool {name!r}: invalid parameters schema: {exc.message}"
            ) from None
        self.fn = fn
        self.down = None
        self.offered = None
        self.name = name
        self.description = description.strip() or name
        self.permission = permission
        self.timeout_s = timeout_s
        self.determinism = "deterministic"
        self.clip = None
        self.danger = None
        self.interactive = False
        self.broad = broad
        self.idempotent = False
        self.read_only = False
        self.replaces = None
        self.reads_outside = False
        self.stages = False
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param = None
        self.parameters = schema
        self._schema_validator = jsonschema.Draft202012Validator(schema)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        errors = sorted(self._schema_validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            problems = []
            for err in errors:
                where = ".".join(str(p) for p in err.path)
                if err.validator == "required":
                    problems.append(f"missing required argument: {err.message}")
                elif err.validator == "additionalProperties":
                    problems.append(f"unknown argument: {err.message}")
                else:
                    problems.append(f"argument {where or '(arguments)'!r}: {err.message}")
            raise ToolArgumentError("; ".join(problems) + f". Expected: {self.signature()}")
        return dict(arguments)


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    permission: Permission = "auto",
    timeout_s: float = 10.0,
    determinism: Determinism = "deterministic",
    clip: Callable[[Any], Any] | None = None,
    danger: Callable[[dict[str, Any], ToolContext], Any] | None = None,
    interactive: bool = False,
    broad: bool = False,
    reads_outside: bool = False,
    idempotent: bool = False,
    stages: bool = False,
    read_only: bool = False,
    replaces: tuple[str, str] | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    permission: Permission = "auto",
    timeout_s: float = 10.0,
    determinism: Determinism = "deterministic",
    clip: Callable[[Any], Any] | None = None,
    danger: Callable[[dict[str, Any], ToolContext], Any] | None = None,
    interactive: bool = False,
    broad: bool = False,
    reads_outside: bool = False,
    idempotent: bool = False,
    stages: bool = False,
    read_only: bool = False,
    replaces: tuple[str, str] | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a tool. Use bare (``@tool``) or with options (``@tool(...)``)."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name=name,
            description=description,
            permission=permission,
            timeout_s=timeout_s,
            determinism=determinism,
            clip=clip,
            danger=danger,
            interactive=interactive,
            broad=broad,
            reads_outside=reads_outside,
            idempotent=idempotent,
            stages=stages,
            read_only=read_only,
            replaces=replaces,
        )

    return wrap(fn) if fn is not None else wrap


def idempotency_key(ctx: ToolContext) -> str:
    """The same for every attempt at one call of one task (a resumed run included): a tool with
    effects can record it and skip the effect the second time, then declare itself idempotent."""
    return f"{ctx.run_id}:{ctx.call_id}"


def private_paths(ctx: ToolContext) -> list[Path]:
    """Folders no tool may read or change, even inside the workspace: Lar's home (config with
    keys, lar.db, the user tools every later process loads) and the configured denied paths."""
    from lar.config import lar_home

    found = [p for p in (ctx.home, lar_home()) if p is not None]
    denied = getattr(ctx.sandbox, "denied_paths", None) or []
    found += [Path(d).expanduser() for d in denied]
    unique: list[Path] = []
    for path in found:
        resolved = path.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique
