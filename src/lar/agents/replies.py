"""What a model's reply becomes as events: the model call, notices about how it was read, and
an engine's failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lar.types import Code, ErrorEvent, ModelCalled, ModelResponse, Notice

if TYPE_CHECKING:
    from lar.engines.base import Engine
    from lar.errors import EngineError

__all__ = ["model_called", "engine_error", "parse_notices"]


def model_called(
    turn: int, engine: Engine, response: ModelResponse, tool_calls: int, **more: Any
) -> ModelCalled:
    """The event for one model call, named by what answered (or the engine's own name)."""
    return ModelCalled(
        turn=turn,
        model=response.model or engine.name,
        engine=response.engine or engine.kind,
        usage=response.usage,
        timings=response.timings,
        tool_calls=tool_calls,
        source=response.source or engine.name,
        **more,
    )


def engine_error(exc: EngineError) -> ErrorEvent:
    return ErrorEvent(
        code=Code.ENGINE_ERROR,
        message=str(exc),
        kind=type(exc).__name__,
        status=exc.status,
        retryable=exc.retryable,
        engine=exc.engine,
        cause=exc,
    )


def parse_notices(response: ModelResponse, parsed: Any, engine: Engine) -> list[Notice]:
    """What the user should know of how a reply was read; a call in a reply cut off at
    max_tokens is taken out of ``parsed`` (it does not run)."""
    out = []
    if response.failover:
        shown = " | ".join(response.failover)
        by = response.model or engine.name
        out.append(Notice(Code.FAILOVER, f"answered by {by} after: {shown}"))
    if parsed.repaired:
        out.append(Notice(Code.REPAIRED, f"repaired malformed tool-call JSON ({parsed.format})"))
        if response.finish_reason == "length" and parsed.calls:
            # Mended JSON of a reply cut off at max_tokens: its last values are cut too.
            shown = ", ".join(c.name for c in parsed.calls)
            out.append(Notice(Code.CUT_CALL, f"not run, cut off at max_tokens: {shown}"))
            parsed.calls, parsed.text = [], ""
    out.extend(Notice(Code.PARSE_WARNING, w) for w in parsed.warnings)
    return out
