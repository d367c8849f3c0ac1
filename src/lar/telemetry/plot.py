"""``lar stats --plot FILE.png``: the aggregates as a chart (matplotlib, Agg backend)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from lar.telemetry.aggregate import ModelStats
from lar.telemetry.records import TelemetryRecord

__all__ = ["plot_stats"]


def plot_stats(stats: list[ModelStats], records: list[TelemetryRecord], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{s.model}\n({s.engine})" for s in stats]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), dpi=100)
    fig.suptitle(f"Lar telemetry: {len(records)} model calls, {sum(s.runs for s in stats)} runs")

    ax = axes[0][0]
    x = range(len(stats))
    width = 0.27
    for i, (name, values) in enumerate(
        [
            ("p50", [s.latency_p50_ms or 0 for s in stats]),
            ("p95", [s.latency_p95_ms or 0 for s in stats]),
            ("p99", [s.latency_p99_ms or 0 for s in stats]),
        ]
    ):
        ax.bar([p + (i - 1) * width for p in x], values, width, label=name)
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_ylabel("latency per call (ms)")
    ax.set_title("Latency percentiles")
    ax.legend()

    ax = axes[0][1]
    ax.bar(labels, [s.tokens_per_s or 0 for s in stats], color="tab:green")
    ax.set_ylabel("completion tokens / s")
    ax.set_title("Throughput")
    ax.tick_params(axis="x", labelsize=8)

    ax = axes[1][0]
    by_model: dict[str, list[tuple[float, float]]] = defaultdict(list)
    t0 = min((r.created for r in records), default=0.0)
    for r in records:
        by_model[r.model].append((r.created - t0, r.latency_ms))
    for model, points in sorted(by_model.items()):
        ax.scatter([p[0] for p in points], [p[1] for p in points], s=10, label=model)
    ax.set_xlabel("seconds since the first call")
    ax.set_ylabel("latency (ms)")
    ax.set_title("Every call")
    ax.legend(fontsize=8)

    ax = axes[1][1]
    measured = [s for s in stats if s.joules_per_output_token is not None]
    if measured:
        ax.bar(
            [f"{s.model}\n({s.engine})" for s in measured],
            [s.joules_per_output_token or 0 for s in measured],
            color="tab:red",
        )
        ax.set_ylabel("joules per output token")
        ax.set_title("Energy")
        ax.tick_params(axis="x", labelsize=8)
    else:
        ax.axis("off")
        ax.text(
            0.5,
            0.5,
            "Energy: not measured on this machine\n(no readable RAPL counters, no NVIDIA GPU)",
            ha="center",
            va="center",
        )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
