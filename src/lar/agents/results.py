"""What a run returns and how its failure is raised (A2, typed failures)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lar.agents.loop import Track
from lar.engines.base import Engine
from lar.errors import EngineError, LarError
from lar.types import ContextCompressed, ErrorEvent, Event, ExecutedCall, Message, Usage

__all__ = ["RunResult", "PromptPreview", "resolve_track", "failure_error", "final_text"]


@dataclass(slots=True)
class RunResult:
    text: str
    tool_calls: list[ExecutedCall]
    stop_reason: str
    usage: Usage
    latency_ms: float
    turns: int
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    failure: ErrorEvent | None = None
    """The failure with its type and fields (status, retryable, engine, tool), if any."""
    run_id: str = ""
    """The task and trace id (``lar trace show ID``, ``agent.feedback(ID, +1)``)."""


@dataclass(slots=True)
class PromptPreview:
    messages: list[Message]
    tokens: dict[str, int]  # system, history, memory, tools (and skills: the tools' share)
    limits: dict[str, int]
    total: int
    n_ctx: int
    reserve: int
    exact: bool  # counted by the model's tokenizer (else estimated)
    events: list[ContextCompressed]


def resolve_track(engine: Engine, requested: str | None) -> Track:
    """Explicit choice, else the catalog's word, else protocol for local GGUF, native for APIs.

    Not constrained yet, though it wins on the held-out sets (docs/evals.md): on the built-in
    tools it calls ``code_run`` for "write a function … only the code", where protocol answers
    with the code, and without ``--yes`` the refusal's text became the answer.
    """
    from lar.engines.catalog import lookup

    if requested in ("native", "protocol", "constrained"):
        return requested  # type: ignore[return-value]
    info = lookup(engine.name) or lookup(engine.model)
    if info is not None:
        return "native" if info.native_tools else "protocol"
    return "protocol" if engine.kind in ("llamacpp", "scripted") else "native"


def failure_error(failure: ErrorEvent | None, engine: str) -> LarError:
    """The typed exception for a failed run, chained from its cause where this process has it."""
    if failure is None:
        return EngineError(engine, "the run failed")
    if failure.kind == "EngineError" or failure.code == "engine_error":
        error: LarError = EngineError(
            failure.engine or engine,
            failure.message.removeprefix(f"{failure.engine}: "),
            status=failure.status,
            retryable=failure.retryable,
        )
    else:
        error = LarError(failure.message)
    error.__cause__ = failure.cause
    return error


def final_text(messages: list[Message]) -> str:
    """The conversation's last answer (an assistant message that calls no tool)."""
    for m in reversed(messages):
        if m.role == "assistant" and not m.tool_calls:
            return m.content
    return "(no answer)"
