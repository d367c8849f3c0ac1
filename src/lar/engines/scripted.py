"""A scripted engine for deterministic tests: it replays planned responses in order.

engine = ScriptedEngine(['{"name": "add", "arguments": {"a": 1, "b": 2}}', "3"])
...
engine.assert_complete()
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from lar.engines.base import Engine, StreamChunk
from lar.types import Message, ModelResponse, Timings, ToolSpec, Usage

__all__ = ["ScriptedEngine", "ScriptExhausted"]

Step = str | ModelResponse | Exception | Callable[[Sequence[Message]], "str | ModelResponse"]


class ScriptExhausted(AssertionError):
    pass


class ScriptedEngine(Engine):
    kind = "scripted"

    def __init__(self, steps: Sequence[Step], *, name: str = "scripted", repeat_last: bool = False):
        self.steps = list(steps)
        self.name = name
        self.model = name
        self.repeat_last = repeat_last
        self.calls: list[list[Message]] = []
        self.tools_seen: list[list[str]] = []

    def _next(self, messages: Sequence[Message]) -> ModelResponse:
        index = len(self.calls)
        self.calls.append(list(messages))
        if index >= len(self.steps):
            if not (self.repeat_last and self.steps):
                raise ScriptExhausted(f"script has {len(self.steps)} steps; call {index + 1} made")
            index = len(self.steps) - 1
        step = self.steps[index]
        if isinstance(step, Exception):
            raise step
        if callable(step):
            step = step(messages)
        if isinstance(step, str):
            prompt = sum(len(m.content) for m in messages) // 4
            return ModelResponse(
                content=step,
                usage=Usage(prompt, max(1, len(step) // 4)),
                timings=Timings(latency_ms=0.0),
                model=self.name,
                engine=self.kind,
                finish_reason="stop",
            )
        return step

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        self.tools_seen.append([t.name for t in tools or ()])
        response = self._next(messages)
        if response.content:
            yield StreamChunk(text=response.content)
        yield StreamChunk(response=response)

    def assert_complete(self) -> None:
        if len(self.calls) < len(self.steps):
            raise AssertionError(
                f"script has {len(self.steps)} steps but only {len(self.calls)} were used"
            )
