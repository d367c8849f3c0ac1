"""The engine interface (E1): messages in, a ModelResponse out, optionally streamed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lar.registry import Registry
from lar.types import Message, ModelResponse, ToolSpec

if TYPE_CHECKING:
    from lar.config import LarConfig, ModelConfig
    from lar.engines.default_model import Progress

__all__ = ["Engine", "StreamChunk", "EngineRegistry", "EngineFactory", "exclusive_loop"]

exclusive_loop: ContextVar[bool] = ContextVar("lar_exclusive_loop", default=False)
"""True while a run owns its event loop outright (``Agent.run``): nothing else can be scheduled
on it, so an engine may do blocking I/O inline instead of paying for a thread hand-off."""


@dataclass(slots=True)
class StreamChunk:
    """A streamed text delta; the last chunk carries the complete ``response``."""

    text: str = ""
    response: ModelResponse | None = None


class Engine(ABC):
    """An inference backend. ``name`` identifies the configured model, ``model`` the served one."""

    name: str = "engine"
    model: str = ""
    kind: str = "engine"
    prompt_cache: bool = False
    """Keeps the prompt's prefix cached between calls (llama.cpp): a request that repeats the
    last one's beginning costs only its new tokens (lar.agents.request ``listing_every``)."""

    @abstractmethod
    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        """Yield text deltas, then one final chunk with the full response."""

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        final: ModelResponse | None = None
        async for chunk in self.stream(messages, tools, **params):
            if chunk.response is not None:
                final = chunk.response
        if final is None:  # an engine bug, not a model answer
            raise RuntimeError(f"engine {self.name!r} ended its stream without a response")
        return final

    context_size: int | None = None
    """The context window in tokens, when the engine knows it."""

    async def count_tokens(self, texts: Sequence[str]) -> list[int] | None:
        """Token counts by the model's own tokenizer (X1); None when the engine cannot tell."""
        return None

    async def set_mark(self, mark: str) -> bool:
        """Keep the state of the engine's prompt cache under ``mark``, for ``rewind``. False
        where the engine keeps no such state (the default)."""
        return False

    async def rewind(self, mark: str | None = None) -> bool:
        """Put the prompt cache back as it was at ``set_mark(mark)``, or empty it (None): what
        the next request costs, and on llama.cpp its exact numbers, then depend on the mark
        and that request only, not on what was asked before (repeatable evaluations). False
        where the engine cannot (the default)."""
        return False

    def drop_mark(self, mark: str) -> None:  # noqa: B027 - optional hook, deliberately not abstract
        """Delete what ``set_mark(mark)`` kept."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, deliberately not abstract
        """Release connections; engines without resources need not override this."""


EngineFactory = Callable[["ModelConfig", "LarConfig", "Progress | None"], Engine]
"""Builds an engine from one ``models:`` entry; plugins register theirs under a new key."""


class EngineRegistry(Registry[EngineFactory]):
    kind = "engine"
