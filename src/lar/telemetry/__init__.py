"""Telemetry (O1–O3): energy collectors, per-inference records and their aggregates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

__all__ = [
    "available_collectors",
    "aggregate_records",
    "plot_stats",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "available_collectors": "lar.telemetry.energy",
        "aggregate_records": "lar.telemetry.aggregate:aggregate",
        "plot_stats": "lar.telemetry.plot",
    },
)

if TYPE_CHECKING:
    from lar.telemetry.aggregate import aggregate as aggregate_records
    from lar.telemetry.energy import available_collectors
    from lar.telemetry.plot import plot_stats
