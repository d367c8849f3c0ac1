"""Aggregates (O3) by model and engine; energy figures only where energy was measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from lar.telemetry.aggregate import aggregate, percentile
from lar.telemetry.plot import plot_stats
from lar.telemetry.records import ESTIMATE_METHOD, TOKEN_METHOD, TelemetryRecord


def rec(
    model: str,
    latency: float,
    prompt: int,
    completion: int,
    energy: float | None = None,
    trace: str = "t1",
    method: str = TOKEN_METHOD,
) -> TelemetryRecord:
    return TelemetryRecord(
        trace, 1, 0.0, model, "llamacpp", latency, None, prompt, completion, method, 0.0,
        energy, None, None, None,
    )  # fmt: skip


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 95), percentile(values, 99)) == (
        50.0,
        95.0,
        99.0,
    )
    assert percentile([], 50) is None and percentile([7.0], 99) == 7.0


def test_energy_figures_come_only_from_measured_calls(tmp_path: Path) -> None:
    records = [
        rec("a", 1000, 80, 20, energy=10.0, trace="t1"),  # 100 tokens, 10 J, 1 s
        rec("a", 1000, 80, 20, energy=30.0, trace="t2"),  # 100 tokens, 30 J, 1 s
        rec("a", 2000, 80, 20, energy=None, trace="t2", method=ESTIMATE_METHOD),
        rec("b", 500, 10, 10),
    ]
    a, b = aggregate(records)
    assert (a.model, a.calls, a.runs, a.energy_calls) == ("a", 3, 2, 2)
    assert a.energy_j == 40.0
    assert a.tokens_per_joule == pytest.approx(200 / 40)
    assert a.joules_per_output_token == pytest.approx(40 / 40)
    # throughput 40 tokens / 2 s = 20 tok/s at 40 J / 2 s = 20 W → 1 tok/s/W
    assert a.throughput_per_watt == pytest.approx(1.0)
    assert a.tokens_per_s == pytest.approx(60 / 4.0)
    assert a.token_methods == (TOKEN_METHOD, ESTIMATE_METHOD)  # sorted: "engine/1" first
    assert b.energy_j is None and b.tokens_per_joule is None and b.throughput_per_watt is None
    png = tmp_path / "s.png"
    plot_stats([a, b], records, png)
    import matplotlib.image

    assert matplotlib.image.imread(str(png)).shape[:2] == (800, 1200)
