"""The reward of one run (L4): fast, cheap and not verbose, as one number in [0, 1].

    reward = 0.4 · latency score + 0.3 · cost score + 0.3 · completion tokens / total tokens

with latency score = max(0, 1 − latency / max latency) and cost score = max(0, 1 − cost / max
cost); the maxima come from ``router.max_latency_s`` and ``router.max_cost_usd``.
"""

from __future__ import annotations

__all__ = ["reward"]


def reward(
    *,
    latency_s: float,
    cost_usd: float,
    completion_tokens: int,
    total_tokens: int,
    max_latency_s: float = 30.0,
    max_cost_usd: float = 0.01,
) -> float:
    latency_score = max(0.0, 1.0 - latency_s / max_latency_s)
    cost_score = max(0.0, 1.0 - cost_usd / max_cost_usd)
    efficiency = completion_tokens / total_tokens if total_tokens > 0 else 0.0
    return round(0.4 * latency_score + 0.3 * cost_score + 0.3 * efficiency, 4)
