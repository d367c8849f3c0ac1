"""The heuristic router (L2): six rules, tried in order; the first that applies decides.

1. urgency > 0.8           → the smallest model (speed over everything)
2. code in the query       → the (largest) model tagged ``code``, else the largest
3. math in the query       → the largest model
4. complexity < 0.20       → the smallest model (saves energy)
5. complexity ≥ 0.55 or reasoning → the largest model
6. otherwise               → the default model

"Smallest" and "largest" go by the catalog's parameter count; models whose size is unknown are
never picked by those rules. Cloud models are filtered out before the router sees them unless
the config allows them (local-first).
"""

from __future__ import annotations

from lar.engines.catalog import ModelInfo
from lar.routing.base import RouteContext, RouterPolicy, RouterRegistry, largest, smallest

__all__ = ["HeuristicRouter", "URGENT", "SIMPLE_BELOW", "COMPLEX_FROM"]

URGENT = 0.8
SIMPLE_BELOW = 0.20
COMPLEX_FROM = 0.55


def _size(info: ModelInfo) -> str:
    return f"{info.params_b:g}B" if info.params_b is not None else "size unknown"


@RouterRegistry.register("heuristic")
class HeuristicRouter(RouterPolicy):
    name = "heuristic"

    def select(self, ctx: RouteContext) -> tuple[str, str, str]:
        c = ctx.complexity
        small, large = smallest(self.candidates), largest(self.candidates)
        if ctx.urgency > URGENT and small is not None:
            why = f"urgency {ctx.urgency:.2f} > {URGENT}"
            return small.name, "urgent", f"{why}: smallest ({_size(small)})"
        if c.has_code:
            coders = [m for m in self.candidates if "code" in m.tags]
            pick = largest(coders) or (coders[0] if coders else None)
            if pick is not None:
                return pick.name, "code", f"code in the query: model tagged code ({_size(pick)})"
            if large is not None:
                why = "code in the query, no model tagged code"
                return large.name, "code", f"{why}: largest ({_size(large)})"
        if c.has_math and large is not None:
            return large.name, "math", f"math in the query: largest ({_size(large)})"
        if c.score < SIMPLE_BELOW and small is not None:
            why = f"complexity {c.score:.2f} < {SIMPLE_BELOW}"
            return small.name, "simple", f"{why}: smallest ({_size(small)})"
        if (c.score >= COMPLEX_FROM or c.has_reasoning) and large is not None:
            why = (
                "reasoning asked for"
                if c.has_reasoning
                else f"complexity {c.score:.2f} ≥ {COMPLEX_FROM}"
            )
            return large.name, "complex", f"{why}: largest ({_size(large)})"
        why = f"complexity {c.score:.2f}, no rule applies"
        return self.default, "default", f"{why}: default model"
