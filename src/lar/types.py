"""Vendor-neutral message, tool-call and event types (E1).

Plain dataclasses rather than pydantic models: they are created on every turn, cost a few hundred
nanoseconds each, and keep ``import lar.types`` cheap. Every type round-trips through JSON with
``to_dict``/``from_dict`` (and ``event_to_json``/``event_from_json`` for the tagged event union),
so histories and event logs written today survive a model or vendor switch.
"""

from __future__ import annotations

import dataclasses
import json
import types as pytypes
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal, TypeVar, Union

from lar.codes import Code

__all__ = [
    "Role",
    "Code",
    "StopReason",
    "SubStatus",
    "SubTaskStarted",
    "SubTaskFinished",
    "ToolSpec",
    "ToolCall",
    "call_text",
    "ToolError",
    "ToolResult",
    "Message",
    "Usage",
    "Timings",
    "ModelResponse",
    "ExecutedCall",
    "RunStarted",
    "TextDelta",
    "Routed",
    "ModelCalled",
    "ToolCallStarted",
    "ToolCallFinished",
    "Notice",
    "MemoryRecalled",
    "MemoryWritten",
    "ContextCompressed",
    "Final",
    "ErrorEvent",
    "Event",
    "EVENT_TYPES",
    "to_dict",
    "from_dict",
    "event_to_json",
    "event_from_json",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What an engine is told of a tool: data only, so engines never import the tools layer."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ToolCall:
    """A request by the model to run one tool.

    ``raw`` keeps the model's original text for the trace when the call was parsed from text or
    its arguments were repaired or coerced.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw: str | None = None


def call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """``add(a=1234, b=4321)``: how a call is shown (to the model after it ran, and to users)."""
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{name}({args})"


@dataclass(slots=True)
class ToolError:
    """A normalized tool failure: the shape every failure takes on its way back to the model."""

    error: str
    detail: str
    code: Code


@dataclass(slots=True)
class ToolResult:
    """What came back from one tool call; ``content`` is the (clipped) text the model sees."""

    call_id: str
    name: str
    content: str
    ok: bool = True
    value: Any = None
    error: ToolError | None = None
    ran: bool = True
    """Whether the tool itself was invoked (False: refused, denied or invalid before it ran, or
    its staged changes were not applied)."""


@dataclass(slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    failed: bool = False
    """A tool message whose call was refused or failed (the executor's ``ToolResult.ok``)."""


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(slots=True)
class Timings:
    """Milliseconds. ``prompt_ms``/``decode_ms`` are filled where the engine reports them."""

    latency_ms: float = 0.0
    ttft_ms: float | None = None
    prompt_ms: float | None = None
    decode_ms: float | None = None
    prompt_evaluated: int | None = None
    """Prompt tokens the engine actually computed (llama.cpp's ``prompt_n``)."""
    prompt_cached: int | None = None
    """Prompt tokens it reused from its cache instead (llama.cpp's ``cache_n``)."""


@dataclass(slots=True)
class ModelResponse:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    timings: Timings = field(default_factory=Timings)
    model: str = ""
    engine: str = ""
    finish_reason: str | None = None
    failover: list[str] = field(default_factory=list)
    """Errors of the engines tried before the one that answered (E4), oldest first."""
    source: str = ""
    """The configured model (engine name) that answered; ``model`` is what it calls itself."""


@dataclass(slots=True)
class ExecutedCall:
    """One tool call that the agent ran, as the Python API reports it."""

    name: str
    arguments: dict[str, Any]
    result: Any
    ok: bool = True
    error: ToolError | None = None


# --- events (A1) -------------------------------------------------------------------------------


@dataclass(slots=True)
class RunStarted:
    type: ClassVar[str] = "run_started"
    run_id: str
    model: str
    track: str


@dataclass(slots=True)
class TextDelta:
    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(slots=True)
class Routed:
    """Which model the router picked for this request and why (L1–L3)."""

    type: ClassVar[str] = "routed"
    model: str
    router: str
    rule: str
    reason: str
    query_class: str
    complexity: float
    tier: str
    budget: int


@dataclass(slots=True)
class ModelCalled:
    type: ClassVar[str] = "model_called"
    turn: int
    model: str
    engine: str
    usage: Usage
    timings: Timings
    tool_calls: int
    repaired: bool = False
    energy_j: float | None = None
    """Joules measured across the call (O2); None where no collector is available."""
    power_w: float | None = None
    failover: list[str] = field(default_factory=list)
    """Errors of the models tried before this one answered (E4)."""
    source: str = ""
    """The configured model that answered (prices come from its catalog entry)."""
    prompt_parts: dict[str, int] = field(default_factory=dict)
    """Prompt tokens per part (system, tools, memory, history) as fitted; empty when the
    prompt was not fitted to a context size."""
    policy: str = ""
    """The policy that asked this question (lar.agents.policy); "" for a turn's own call."""


@dataclass(slots=True)
class ToolCallStarted:
    type: ClassVar[str] = "tool_call"
    call: ToolCall


@dataclass(slots=True)
class ToolCallFinished:
    type: ClassVar[str] = "tool_result"
    result: ToolResult
    duration_ms: float


@dataclass(slots=True)
class Notice:
    """Something the user should know that is not an error (a repair, a blocked loop …)."""

    type: ClassVar[str] = "notice"
    code: Code
    message: str
    policy: str = ""
    """The policy that gave it (lar.agents.policy), if one did."""
    numbers: dict[str, float] = field(default_factory=dict)
    """What the policy measured: similarities, thresholds, counts."""


@dataclass(slots=True)
class MemoryRecalled:
    """Memories recalled for the user's message (M3), with their scores."""

    type: ClassVar[str] = "memory_recalled"
    query: str
    items: list[dict[str, Any]]
    duration_ms: float = 0.0


@dataclass(slots=True)
class MemoryWritten:
    """A write-policy decision (M4): stored, merged, superseded or refused (with the reason)."""

    type: ClassVar[str] = "memory_written"
    action: str
    content: str
    memory_id: str | None = None
    replaced: str | None = None
    reason: str = ""


@dataclass(slots=True)
class ContextCompressed:
    """The prompt was cut to fit the context (X3, X5): which part, tokens before and after."""

    type: ClassVar[str] = "context_compressed"
    part: str
    before: int
    after: int
    detail: str = ""


StopReason = Literal["answer", "max_turns", "loop", "error", "token_budget", "time_budget"]
"""Why a run ended: its answer, out of turns, a loop, a failure, or one of its budgets spent."""


@dataclass(slots=True)
class Final:
    type: ClassVar[str] = "final"
    text: str
    stop_reason: StopReason
    usage: Usage
    latency_ms: float
    turns: int


@dataclass(slots=True)
class ErrorEvent:
    """A run that failed, with the failure's type and fields (they survive JSON)."""

    type: ClassVar[str] = "error"
    code: Code
    message: str
    kind: str = ""
    """The exception's class name (``EngineError``)."""
    status: int | None = None
    """An HTTP status, when an engine answered with one."""
    retryable: bool = False
    engine: str | None = None
    tool: str | None = None
    cause: BaseException | None = field(
        default=None, repr=False, compare=False, metadata={"json": False}
    )
    """The exception itself, in this process only (``Agent.run`` raises ``from`` it)."""


SubStatus = Literal["success", "failed", "timeout"]
"""How a sub-agent's task ended (A4 delegate): only ``success`` carries a result to build on."""


@dataclass(slots=True)
class SubTaskStarted:
    """A delegate's sub-agent started a task; ``run_id`` is its own run (and child trace)."""

    type: ClassVar[str] = "subtask_started"
    id: str
    agent: str
    task: str
    run_id: str


@dataclass(slots=True)
class SubTaskFinished:
    type: ClassVar[str] = "subtask_finished"
    id: str
    agent: str
    status: SubStatus
    reason: str
    text: str
    run_id: str
    started: float
    """Seconds since the epoch."""
    ended: float


Event = Union[  # noqa: UP007 - a runtime alias; typing.get_args needs the Union form
    RunStarted,
    TextDelta,
    Routed,
    ModelCalled,
    ToolCallStarted,
    ToolCallFinished,
    Notice,
    MemoryRecalled,
    MemoryWritten,
    ContextCompressed,
    SubTaskStarted,
    SubTaskFinished,
    Final,
    ErrorEvent,
]
EVENT_TYPES: dict[str, type[Any]] = {cls.type: cls for cls in typing.get_args(Event)}

# --- JSON codec ------------------------------------------------------------------------------

T = TypeVar("T")


def to_dict(obj: Any) -> Any:
    """Any of this module's types (or lists/dicts of them) → JSON-compatible data."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        tag = getattr(type(obj), "type", None)
        if isinstance(tag, str):
            out["type"] = tag
        for f in dataclasses.fields(obj):
            if f.metadata.get("json", True):
                out[f.name] = to_dict(getattr(obj, f.name))
        return out
    if isinstance(obj, list | tuple):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    return obj


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _decode(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin is Union or origin is pytypes.UnionType:
        for arg in typing.get_args(tp):
            if arg is type(None):
                continue
            if isinstance(arg, type) and dataclasses.is_dataclass(arg) and isinstance(value, dict):
                return from_dict(arg, value)
        return value
    if origin is list:
        (item,) = typing.get_args(tp)
        return [_decode(item, v) for v in value]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_dict(tp, value)
    if isinstance(tp, type) and issubclass(tp, StrEnum) and isinstance(value, str):
        try:
            return tp(value)
        except ValueError:
            return value  # a code from a newer version: kept as written
    return value


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """The inverse of :func:`to_dict` for one of this module's dataclasses."""
    hints = _hints(cls)
    kwargs = {
        f.name: _decode(hints[f.name], data[f.name])
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.name in data
    }
    return cls(**kwargs)


def event_to_json(event: Event) -> str:
    return json.dumps(to_dict(event), ensure_ascii=False, default=str)


def event_from_json(text: str) -> Event:
    data = json.loads(text)
    try:
        cls = EVENT_TYPES[data["type"]]
    except KeyError as exc:
        raise ValueError(
            f"unknown event type {data.get('type')!r}; known: {', '.join(EVENT_TYPES)}"
        ) from exc
    event: Event = from_dict(cls, data)
    return event
