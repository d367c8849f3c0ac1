"""Energy collectors (O2): RAPL on a fake powercap tree, NVML on a fake module."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from lar.telemetry.energy import (
    CollectorRegistry,
    NvmlCollector,
    PowerIntegrator,
    RaplCollector,
    available_collectors,
)


def zone(root: Path, name: str, energy: int, wrap: int = 262_143_328_850) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "name").write_text("package-0\n")
    (d / "energy_uj").write_text(f"{energy}\n")
    (d / "max_energy_range_uj").write_text(f"{wrap}\n")
    return d


def test_rapl_sums_package_zones_and_ignores_subzones(tmp_path: Path) -> None:
    p0 = zone(tmp_path, "intel-rapl:0", 5_000_000)
    p1 = zone(tmp_path, "intel-rapl:1", 1_000_000)
    sub = zone(tmp_path, "intel-rapl:0:0", 7)  # core sub-zone: already inside package 0
    (tmp_path / "intel-rapl-mmio:0").mkdir()
    rapl = RaplCollector(tmp_path)
    assert rapl.available()
    token = rapl.start()
    (p0 / "energy_uj").write_text("7500000\n")  # +2.5 J
    (p1 / "energy_uj").write_text("1500000\n")  # +0.5 J
    (sub / "energy_uj").write_text("999999999\n")
    reading = rapl.stop(token)
    assert reading is not None and reading.joules == pytest.approx(3.0)
    assert reading.collector == "rapl" and reading.seconds >= 0


def test_rapl_counter_wrap_around(tmp_path: Path) -> None:
    wrap = 1_000_000_000
    p0 = zone(tmp_path, "intel-rapl:0", wrap - 500_000, wrap=wrap)
    rapl = RaplCollector(tmp_path)
    token = rapl.start()
    (p0 / "energy_uj").write_text("1500000\n")  # passed the top: 0.5 J before, 1.5 J after
    reading = rapl.stop(token)
    assert reading is not None and reading.joules == pytest.approx(2.0)


def test_rapl_unavailable_or_unreadable_yields_none(tmp_path: Path) -> None:
    assert not RaplCollector(tmp_path / "missing").available()
    p0 = zone(tmp_path, "intel-rapl:0", 10)
    rapl = RaplCollector(tmp_path)
    token = rapl.start()
    (p0 / "energy_uj").write_text("")  # the zone went away under us (the read fails)
    assert rapl.stop(token) is None
    fresh = RaplCollector(tmp_path)
    (p0 / "energy_uj").unlink()
    assert not fresh.available() and fresh.stop(fresh.start()) is None


class FakeNvml:
    """The parts of pynvml the collector uses; energy in mJ, power in mW."""

    class NVMLError(Exception):
        pass

    def __init__(self, *, counter: bool, devices: int = 2, fail_init: bool = False) -> None:
        self.counter, self.devices, self.fail_init = counter, devices, fail_init
        self.energy = [1_000_000, 2_000_000]
        self.power_mw = [100_000, 50_000]

    def nvmlInit(self) -> None:  # noqa: N802 - pynvml's names
        if self.fail_init:
            raise self.NVMLError("Driver Not Loaded")

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        return self.devices

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:  # noqa: N802
        return i

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:  # noqa: N802
        if not self.counter:
            raise self.NVMLError("Not Supported")
        return self.energy[h]

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:  # noqa: N802
        return self.power_mw[h]


def test_nvml_total_energy_counter_in_millijoules() -> None:
    fake = FakeNvml(counter=True)
    nvml = NvmlCollector(fake)
    assert nvml.available()
    token = nvml.start()
    fake.energy = [1_012_500, 2_002_500]  # +12.5 J and +2.5 J
    reading = nvml.stop(token)
    assert reading is not None and reading.joules == pytest.approx(15.0)


def test_nvml_without_the_counter_integrates_polled_power() -> None:
    ticks = itertools.count()
    clock = lambda: next(ticks) * 0.1  # noqa: E731 - each reading of the clock is 0.1 s later
    fake = FakeNvml(counter=False)
    nvml = NvmlCollector(fake, interval_s=0.001, clock=clock)
    token = nvml.start()
    reading = nvml.stop(token)
    assert reading is not None
    # constant power: the trapezoid rule gives watts × time covered by each device's samples
    polls = [mark for kind, mark in token[1]]
    expected = sum(
        watts * (p.integrator.samples[-1][0] - p.integrator.samples[0][0])
        for p, watts in zip(polls, (100.0, 50.0), strict=True)
    )
    assert reading.joules == pytest.approx(expected) and reading.joules > 0


def test_trapezoid_rule() -> None:
    integ = PowerIntegrator()
    for t, w in [(0.0, 10.0), (1.0, 20.0), (3.0, 20.0)]:
        integ.add(t, w)
    assert integ.joules() == pytest.approx(15.0 + 40.0)


def test_nvml_without_driver_is_off_and_never_raises() -> None:
    nvml = NvmlCollector(FakeNvml(counter=True, fail_init=True))
    assert not nvml.available()
    assert nvml.stop(nvml.start()) is None


def test_registry_and_probe_swallow_broken_collectors() -> None:
    class Broken(RaplCollector):
        def available(self) -> bool:
            raise RuntimeError("boom")

    CollectorRegistry.add("broken-test", Broken)
    try:
        names = [c.name for c in available_collectors()]
        assert "broken-test" not in names
    finally:
        CollectorRegistry.remove("broken-test")
    assert {"rapl", "nvml"} <= set(CollectorRegistry.keys())
