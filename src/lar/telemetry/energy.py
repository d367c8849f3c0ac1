"""Energy collectors (O2): how many joules a stretch of work cost, measured, never guessed.

- ``rapl``: Intel/AMD RAPL counters under ``/sys/class/powercap`` (package zones, µJ), with
  the counter's wrap-around at ``max_energy_range_uj`` handled.
- ``nvml``: NVIDIA GPUs through nvidia-ml-py. Volta and later have a total-energy counter (mJ);
  older cards are sampled for power in a background thread and integrated by the trapezoid rule.

A collector that is unavailable (no such hardware, no permission, no library) says so once and
then yields ``None``: it never slows or fails a run. Collectors sit behind a registry so a
plugin can add one (AMD SMI, Apple powermetrics…).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lar.registry import Registry

__all__ = [
    "EnergyCollector",
    "EnergyReading",
    "CollectorRegistry",
    "RaplCollector",
    "NvmlCollector",
    "PowerIntegrator",
    "available_collectors",
]

log = logging.getLogger("lar.telemetry")


@dataclass(slots=True, frozen=True)
class EnergyReading:
    collector: str
    joules: float
    seconds: float

    @property
    def watts(self) -> float | None:
        return self.joules / self.seconds if self.seconds > 0 else None


class EnergyCollector(ABC):
    name = "energy"

    @abstractmethod
    def available(self) -> bool:
        """Whether this machine can be measured by this collector (checked once, cheaply)."""

    @abstractmethod
    def start(self) -> Any:
        """Begin a measurement; returns a token for ``stop``."""

    @abstractmethod
    def stop(self, token: Any) -> EnergyReading | None:
        """End it: the energy used since ``start``, or None if it could not be measured."""


class CollectorRegistry(Registry[Callable[[], EnergyCollector]]):
    """Energy collectors by name; the factory takes no arguments."""


# --- RAPL -------------------------------------------------------------------------------------

_PACKAGE_ZONE = re.compile(r"^intel-rapl:\d+$")  # packages; sub-zones (…:0:1) are inside them


@dataclass(slots=True)
class _Zone:
    energy: Path
    wrap: int  # max_energy_range_uj
    fd: int = -1  # kept open: a pread costs ~2 µs, an open/read/close ~30 µs

    def read(self) -> int:
        if self.fd < 0:
            self.fd = os.open(self.energy, os.O_RDONLY)
        return int(os.pread(self.fd, 32, 0))


class RaplCollector(EnergyCollector):
    name = "rapl"

    def __init__(self, root: Path = Path("/sys/class/powercap")) -> None:
        self.root = root
        self._zones: list[_Zone] | None = None

    def _find(self) -> list[_Zone]:
        if self._zones is None:
            zones = []
            try:
                entries = sorted(self.root.iterdir())
            except OSError:
                entries = []
            for d in entries:
                if not _PACKAGE_ZONE.match(d.name):
                    continue
                try:
                    wrap = int((d / "max_energy_range_uj").read_text())
                    int((d / "energy_uj").read_text())  # readable? (root-only on many kernels)
                except (OSError, ValueError):
                    continue
                zones.append(_Zone(d / "energy_uj", wrap))
            self._zones = zones
        return self._zones

    def available(self) -> bool:
        return bool(self._find())

    def _read(self) -> list[int] | None:
        try:
            return [z.read() for z in self._find()]
        except (OSError, ValueError):
            return None

    def __del__(self) -> None:
        for z in self._zones or ():
            if z.fd >= 0:
                os.close(z.fd)
                z.fd = -1

    def start(self) -> Any:
        return (time.monotonic(), self._read())

    def stop(self, token: Any) -> EnergyReading | None:
        t0, first = token
        last = self._read()
        seconds = time.monotonic() - t0
        if not first or not last or len(first) != len(last):
            return None
        micro = 0
        for zone, a, b in zip(self._find(), first, last, strict=True):
            delta = b - a
            if delta < 0:  # the counter wrapped (at most once: it takes minutes to hours)
                delta += zone.wrap
            micro += delta
        return EnergyReading(self.name, micro / 1e6, seconds)


# --- NVML -------------------------------------------------------------------------------------


class PowerIntegrator:
    """Energy from power samples by the trapezoid rule: Σ (p₀ + p₁)/2 · (t₁ − t₀)."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (seconds, watts)

    def add(self, t: float, watts: float) -> None:
        self.samples.append((t, watts))

    def joules(self) -> float:
        pts = self.samples
        return sum(
            (p0 + p1) / 2 * (t1 - t0) for (t0, p0), (t1, p1) in zip(pts, pts[1:], strict=False)
        )


class _Poll:
    def __init__(
        self, sample: Callable[[], float], interval: float, clock: Callable[[], float], limit: float
    ) -> None:
        self.integrator = PowerIntegrator()
        self._sample, self._interval, self._clock, self._limit = sample, interval, clock, limit
        self._stop = threading.Event()
        self.failed = False
        self.integrator.add(clock(), sample())
        self._thread = threading.Thread(target=self._run, name="lar-nvml-poll", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        started = self._clock()
        # Bounded: stops when told, or after `limit` seconds if nobody ever stops it.
        while not self._stop.wait(self._interval) and self._clock() - started < self._limit:
            try:
                self.integrator.add(self._clock(), self._sample())
            except Exception:  # noqa: BLE001 - a failed sample ends this measurement only
                self.failed = True
                return

    def finish(self) -> float | None:
        self._stop.set()
        self._thread.join(timeout=1.0)
        try:
            self.integrator.add(self._clock(), self._sample())
        except Exception:  # noqa: BLE001
            self.failed = True
        return None if self.failed else self.integrator.joules()


class NvmlCollector(EnergyCollector):
    name = "nvml"

    def __init__(
        self,
        nvml: Any = None,
        *,
        interval_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        limit_s: float = 3600.0,
    ) -> None:
        self._nvml = nvml
        self._handles: list[Any] | None = None
        self._counter: list[bool] = []  # per device: has the total-energy counter
        self.interval_s = interval_s
        self.clock = clock
        self.limit_s = limit_s

    def _module(self) -> Any:
        if self._nvml is None:
            import pynvml  # nvidia-ml-py

            self._nvml = pynvml
        return self._nvml

    def _init(self) -> list[Any]:
        if self._handles is None:
            self._handles = []
            try:
                nv = self._module()
                nv.nvmlInit()
                for i in range(nv.nvmlDeviceGetCount()):
                    handle = nv.nvmlDeviceGetHandleByIndex(i)
                    try:
                        nv.nvmlDeviceGetTotalEnergyConsumption(handle)
                        counter = True
                    except nv.NVMLError:
                        counter = False  # pre-Volta: poll power instead
                    self._handles.append(handle)
                    self._counter.append(counter)
            except Exception as exc:  # noqa: BLE001 - no driver, no library, no GPU
                log.debug("nvml unavailable: %s", exc)
                self._handles = []
        return self._handles

    def available(self) -> bool:
        return bool(self._init())

    def start(self) -> Any:
        t0 = self.clock()
        marks: list[Any] = []
        if not self._init():
            return (t0, marks)
        nv = self._module()
        for handle, counter in zip(self._init(), self._counter, strict=True):
            try:
                if counter:
                    marks.append(("counter", nv.nvmlDeviceGetTotalEnergyConsumption(handle)))
                else:
                    sample = lambda h=handle: nv.nvmlDeviceGetPowerUsage(h) / 1000.0  # noqa: E731
                    marks.append(("poll", _Poll(sample, self.interval_s, self.clock, self.limit_s)))
            except Exception:  # noqa: BLE001
                marks.append(("failed", None))
        return (t0, marks)

    def stop(self, token: Any) -> EnergyReading | None:
        t0, marks = token
        if not marks:
            return None
        nv = self._module()
        total = 0.0
        for (kind, mark), handle in zip(marks, self._init(), strict=True):
            if kind == "failed":
                return None
            if kind == "counter":
                try:
                    total += (nv.nvmlDeviceGetTotalEnergyConsumption(handle) - mark) / 1000.0
                except Exception:  # noqa: BLE001
                    return None
            else:
                joules = mark.finish()
                if joules is None:
                    return None
                total += joules
        return EnergyReading(self.name, total, self.clock() - t0)


CollectorRegistry.add("rapl", RaplCollector)
CollectorRegistry.add("nvml", NvmlCollector)


def available_collectors() -> list[EnergyCollector]:
    """Every registered collector this machine supports (each probed once, errors swallowed)."""
    found = []
    for name in CollectorRegistry.keys():
        try:
            collector = CollectorRegistry.get(name)()
            if collector.available():
                found.append(collector)
        except Exception as exc:  # noqa: BLE001 - a broken collector is just unavailable
            log.debug("collector %s unavailable: %s", name, exc)
    return found
