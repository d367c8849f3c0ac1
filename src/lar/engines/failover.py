"""Failover across engines (E4): the next engine is tried only for network-class failures."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from lar.engines.base import Engine, StreamChunk
from lar.errors import EngineError
from lar.types import Message, ModelResponse, ToolSpec

__all__ = ["FailoverEngine"]


class FailoverEngine(Engine):
    """Tries each engine in order. A 4xx or a malformed answer is final: it would fail again."""

    kind = "failover"

    def __init__(self, engines: Sequence[Engine]) -> None:
        if not engines:
            raise ValueError("FailoverEngine needs at least one engine")
        self.engines = list(engines)
        self.name = self.engines[0].name
        self.model = self.engines[0].model
        self.prompt_cache = self.engines[0].prompt_cache  # the engine that answers first
        self.failures: list[str] = []

    # The engine that answers first; a fallback is started only when it is needed.
    async def set_mark(self, mark: str) -> bool:
        return await self.engines[0].set_mark(mark)

    async def rewind(self, mark: str | None = None) -> bool:
        return await self.engines[0].rewind(mark)

    def drop_mark(self, mark: str) -> None:
        self.engines[0].drop_mark(mark)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        errors: list[str] = []
        for engine in self.engines:
            emitted = False
            try:
                async for chunk in engine.stream(messages, tools, **params):
                    emitted = emitted or bool(chunk.text)
                    if chunk.response is not None:
                        chunk.response.failover = list(errors)
                        chunk.response.source = chunk.response.source or engine.name
                    yield chunk
                self.failures = errors
                return
            except EngineError as exc:
                if not exc.retryable or emitted:
                    raise
                errors.append(str(exc))
        raise EngineError("failover", "all engines failed: " + " | ".join(errors), retryable=True)

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        errors: list[str] = []
        for engine in self.engines:
            try:
                response = await engine.generate(messages, tools, **params)
            except EngineError as exc:
                if not exc.retryable:
                    raise
                errors.append(str(exc))
                continue
            self.failures = errors
            response.failover = list(errors)
            response.source = response.source or engine.name
            return response
        raise EngineError("failover", "all engines failed: " + " | ".join(errors), retryable=True)

    async def aclose(self) -> None:
        for engine in self.engines:
            await engine.aclose()
