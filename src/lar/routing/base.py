"""The router interface: a query and the candidate models in, a model and its reason out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from lar.engines.catalog import ModelInfo
from lar.registry import Registry
from lar.routing.complexity import Complexity, classify, score
from lar.types import Routed

__all__ = ["Decision", "RouteContext", "RouterPolicy", "RouterRegistry", "smallest", "largest"]


@dataclass(frozen=True, slots=True)
class RouteContext:
    query: str
    complexity: Complexity
    urgency: float = 0.0
    """0–1; above 0.8 the smallest model answers, whatever the query."""

    @classmethod
    def of(cls, query: str, urgency: float = 0.0) -> RouteContext:
        return cls(query, score(query), urgency)

    @property
    def query_class(self) -> str:
        return classify(self.complexity)


Decision = Routed
"""A routing decision is the ``routed`` event the agent yields (model, router, rule, reason,
query class, complexity, tier, budget)."""


class RouterPolicy(ABC):
    """Picks one of ``candidates`` (the catalog's view of each configured model)."""

    name = "router"

    def __init__(self, candidates: Sequence[ModelInfo], default: str) -> None:
        if not candidates:
            raise ValueError("a router needs at least one candidate model")
        self.candidates = list(candidates)
        self.default = default if any(c.name == default for c in candidates) else candidates[0].name

    @abstractmethod
    def select(self, ctx: RouteContext) -> tuple[str, str, str]:
        """(model, rule, reason)."""

    def decide(self, ctx: RouteContext) -> Decision:
        model, rule, reason = self.select(ctx)
        thinking = "thinking" in self.info(model).tags
        return Decision(
            model,
            self.name,
            rule,
            reason,
            ctx.query_class,
            ctx.complexity.score,
            ctx.complexity.tier,
            ctx.complexity.budget(thinking=thinking),
        )

    def info(self, name: str) -> ModelInfo:
        return next(c for c in self.candidates if c.name == name)


class RouterRegistry(Registry[type[RouterPolicy]]):
    kind = "router"


def _sized(candidates: Sequence[ModelInfo]) -> list[ModelInfo]:
    return [c for c in candidates if c.params_b is not None]


def smallest(candidates: Sequence[ModelInfo]) -> ModelInfo | None:
    sized = _sized(candidates)
    return min(sized, key=lambda c: c.params_b or 0.0) if sized else None


def largest(candidates: Sequence[ModelInfo]) -> ModelInfo | None:
    sized = _sized(candidates)
    return max(sized, key=lambda c: c.params_b or 0.0) if sized else None
