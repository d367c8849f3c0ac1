"""Aggregates over telemetry records (O3), by model and engine.

Tokens per joule, joules per output token and throughput per watt need a measured energy; where
no collector was available they are None, never guessed. Latency percentiles are nearest-rank.
A group whose token counts came from more than one counting method says so (``token_methods``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lar.telemetry.records import TelemetryRecord

__all__ = ["ModelStats", "aggregate", "percentile"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0–100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(slots=True)
class ModelStats:
    model: str
    engine: str
    calls: int
    runs: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    latency_p99_ms: float | None
    ttft_p50_ms: float | None
    tokens_per_s: float | None
    """Completion tokens per second of model time."""
    energy_j: float | None
    energy_calls: int
    tokens_per_joule: float | None
    joules_per_output_token: float | None
    throughput_per_watt: float | None
    """Completion tokens per second per watt of mean power."""
    token_methods: tuple[str, ...]


def aggregate(records: Iterable[TelemetryRecord]) -> list[ModelStats]:
    groups: dict[tuple[str, str], list[TelemetryRecord]] = defaultdict(list)
    for r in records:
        groups[(r.model, r.engine)].append(r)
    out = []
    for (model, engine), rs in sorted(groups.items()):
        latencies = [r.latency_ms for r in rs]
        ttfts = [r.ttft_ms for r in rs if r.ttft_ms is not None]
        completion = sum(r.completion_tokens for r in rs)
        seconds = sum(latencies) / 1000
        tokens_per_s = completion / seconds if seconds > 0 else None
        measured = [r for r in rs if r.energy_j is not None]
        energy = sum(r.energy_j or 0.0 for r in measured) if measured else None
        tpj = jpt = tpw = None
        if energy:
            m_tokens = sum(r.prompt_tokens + r.completion_tokens for r in measured)
            m_completion = sum(r.completion_tokens for r in measured)
            m_seconds = sum(r.latency_ms for r in measured) / 1000
            tpj = m_tokens / energy
            jpt = energy / m_completion if m_completion else None
            if m_seconds > 0:
                watts = energy / m_seconds
                tpw = (m_completion / m_seconds) / watts if watts > 0 else None
        out.append(
            ModelStats(
                model=model,
                engine=engine,
                calls=len(rs),
                runs=len({r.trace_id for r in rs}),
                prompt_tokens=sum(r.prompt_tokens for r in rs),
                completion_tokens=completion,
                cost_usd=sum(r.cost_usd for r in rs),
                latency_p50_ms=percentile(latencies, 50),
                latency_p95_ms=percentile(latencies, 95),
                latency_p99_ms=percentile(latencies, 99),
                ttft_p50_ms=percentile(ttfts, 50),
                tokens_per_s=tokens_per_s,
                energy_j=energy,
                energy_calls=len(measured),
                tokens_per_joule=tpj,
                joules_per_output_token=jpt,
                throughput_per_watt=tpw,
                token_methods=tuple(sorted({r.token_method for r in rs})),
            )
        )
    return out
