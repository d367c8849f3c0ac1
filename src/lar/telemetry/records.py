"""Telemetry records (O1): one per inference, energy measured around the call.

``EnergyMeter`` wraps whichever collectors this machine has (``energy.available_collectors``);
with none it costs one attribute test. A collector that fails mid-run is dropped for the rest of
the process: telemetry never fails or slows a run.

Token counts carry the method that produced them (``TOKEN_METHOD``): when an engine reports
usage, its numbers are used as they are (``engine/1``); when it reports nothing, the text is
estimated at 3.5 characters a token (``estimate/1``). Aggregates never mix the two silently, and a
future change of method gets a new version instead of rewriting history.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from lar.telemetry.energy import EnergyCollector, available_collectors

__all__ = [
    "TelemetryRecord",
    "EnergyMeter",
    "TOKEN_METHOD",
    "ESTIMATE_METHOD",
    "token_counts",
    "default_meter",
]

log = logging.getLogger("lar.telemetry")

TOKEN_METHOD = "engine/1"
"""Counts the engine reported (llama.cpp's tokenizer, an API's usage field)."""
ESTIMATE_METHOD = "estimate/1"
"""3.5 characters a token, for engines that report no usage."""


def token_counts(
    prompt_tokens: int, completion_tokens: int, prompt_chars: int, completion_chars: int
) -> tuple[int, int, str]:
    if prompt_tokens or completion_tokens:
        return prompt_tokens, completion_tokens, TOKEN_METHOD
    return round(prompt_chars / 3.5), round(completion_chars / 3.5), ESTIMATE_METHOD


@dataclass(slots=True)
class TelemetryRecord:
    trace_id: str
    turn: int
    created: float
    model: str
    engine: str
    latency_ms: float
    ttft_ms: float | None
    prompt_tokens: int
    completion_tokens: int
    token_method: str
    cost_usd: float
    energy_j: float | None
    power_w: float | None
    prefill_ms: float | None
    decode_ms: float | None


class EnergyMeter:
    """Measures joules across a stretch of work with every available collector, summed."""

    def __init__(self, collectors: list[EnergyCollector] | None = None) -> None:
        self.collectors = available_collectors() if collectors is None else list(collectors)

    def start(self) -> Any:
        if not self.collectors:
            return None
        tokens = []
        for c in list(self.collectors):
            try:
                tokens.append((c, c.start()))
            except Exception as exc:  # noqa: BLE001 - never fail a run for telemetry
                self._drop(c, exc)
        return (time.perf_counter(), tokens)

    def stop(self, token: Any) -> tuple[float | None, float | None]:
        """(joules, watts) since ``start``, or (None, None) when nothing could be measured."""
        if token is None:
            return None, None
        t0, tokens = token
        joules = 0.0
        measured = False
        for collector, tok in tokens:
            try:
                reading = collector.stop(tok)
            except Exception as exc:  # noqa: BLE001
                self._drop(collector, exc)
                continue
            if reading is not None:
                joules += reading.joules
                measured = True
        if not measured:
            return None, None
        seconds = time.perf_counter() - t0
        return joules, (joules / seconds if seconds > 0 else None)

    def _drop(self, collector: EnergyCollector, exc: Exception) -> None:
        log.warning("energy collector %s failed (%s); it is off for this process", collector, exc)
        if collector in self.collectors:
            self.collectors.remove(collector)


_DEFAULT: EnergyMeter | None = None


def default_meter() -> EnergyMeter:
    """One meter per process: collectors are probed once (RAPL files, NVML init)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = EnergyMeter()
    return _DEFAULT
