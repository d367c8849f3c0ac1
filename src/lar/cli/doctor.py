"""``lar doctor``: what this machine offers Lar, which safety level is active, and a config
recommended for it (E6, B2)."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from lar.config import LarConfig
from lar.db import check, move_aside
from lar.engines import DEFAULT_MODEL, MODEL_PACKAGES, model_path
from lar.tools import isolation_level, process_cap_available, seccomp_filter

__all__ = ["Hardware", "detect", "recommend", "doctor_rows", "print_doctor"]


@dataclass(slots=True)
class Gpu:
    name: str
    memory_gib: float
    energy_counter: bool


@dataclass(slots=True)
class Hardware:
    cpu_threads: int
    physical_cores: int | None
    memory_gib: float | None
    gpus: list[Gpu] = field(default_factory=list)


def _memory_gib(meminfo: Path = Path("/proc/meminfo")) -> float | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except (OSError, ValueError):
        pass
    return None


def _physical_cores(cpuinfo: Path = Path("/proc/cpuinfo")) -> int | None:
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    cores = set()
    phys = core = None
    for line in [*text.splitlines(), ""]:
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            phys = value.strip()
        elif key == "core id":
            core = value.strip()
        elif not line.strip():
            if core is not None:
                cores.add((phys, core))
            phys = core = None
    return len(cores) or None


def _gpus(nvml: Any = None) -> list[Gpu]:
    try:
        if nvml is None:
            import pynvml  # nvidia-ml-py

            nvml = pynvml
        nv = nvml
        nv.nvmlInit()
    except Exception:  # noqa: BLE001 - no library, no driver: no NVIDIA GPU to use
        return []
    found = []
    try:
        for i in range(nv.nvmlDeviceGetCount()):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            name = nv.nvmlDeviceGetName(h)
            name = name.decode() if isinstance(name, bytes) else str(name)
            memory = nv.nvmlDeviceGetMemoryInfo(h).total / 1024**3
            try:
                nv.nvmlDeviceGetTotalEnergyConsumption(h)
                counter = True
            except Exception:  # noqa: BLE001 - pre-Volta
                counter = False
            found.append(Gpu(name, memory, counter))
    except Exception:  # noqa: BLE001
        return found
    return found


def detect(nvml: Any = None) -> Hardware:
    try:
        threads = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        threads = os.cpu_count() or 1
    return Hardware(threads, _physical_cores(), _memory_gib(), _gpus(nvml))


def recommend(hw: Hardware) -> tuple[dict[str, Any], list[str]]:
    """A config for this machine and the reasons, one per choice."""
    why = []
    ram = hw.memory_gib or 0.0
    threads = max(1, min(hw.physical_cores or hw.cpu_threads, 8))
    why.append(
        f"threads {threads}: llama.cpp decodes fastest on physical cores "
        f"({hw.physical_cores or '?'} here, {hw.cpu_threads} threads), at most 8"
    )
    if ram >= 16:
        n_ctx = 8192
    elif ram >= 6:
        n_ctx = 4096
    else:
        n_ctx = 2048
    why.append(f"n_ctx {n_ctx}: {ram:.1f} GiB of memory")
    models: list[dict[str, Any]] = []
    if ram >= 3:
        models.append({"name": "default", "engine": "llamacpp", "n_ctx": n_ctx, "threads": threads})
        why.append(f"model {DEFAULT_MODEL.name}: fits in {ram:.1f} GiB")
        tiny = MODEL_PACKAGES["qwen2.5-coder-0.5b-instruct"]
        models.append(
            {
                "name": "tiny",
                "engine": "llamacpp",
                "package": tiny.name,
                "n_ctx": min(n_ctx, 4096),
                "threads": threads,
            }
        )
        why.append("a second, 0.5B model: the router sends trivial and urgent requests there")
    else:
        models.append(
            {
                "name": "default",
                "engine": "llamacpp",
                "package": "qwen2.5-coder-0.5b-instruct",
                "n_ctx": n_ctx,
                "threads": threads,
            }
        )
        why.append(f"model qwen2.5-coder-0.5b-instruct only: {ram:.1f} GiB is little memory")
    if hw.gpus:
        g = hw.gpus[0]
        why.append(
            f"GPU {g.name} ({g.memory_gib:.0f} GiB): the embedded engine is a CPU build; serve a "
            "larger model with a CUDA llama.cpp or vLLM and add it as an `engine: openai` model"
        )
    config: dict[str, Any] = {
        "model": "default",
        "models": models,
        "router": {"policy": "auto", "allow_cloud": False},
    }
    return config, why


def write_recommended(config: LarConfig, hw: Hardware) -> tuple[Path, list[str]]:
    """Write ``$LAR_HOME/config.recommended.yaml`` (never the live config.yaml)."""
    data, why = recommend(hw)
    path = config.home / "config.recommended.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "# Recommended by `lar doctor` for this machine; copy to config.yaml to use it.\n"
    header += "".join(f"# - {w}\n" for w in why)
    path.write_text(header + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path, why


def doctor_rows(config: LarConfig, hw: Hardware | None = None) -> list[tuple[str, str, str]]:
    """(check, value, advice) rows; advice is empty when all is well."""
    hw = hw or detect()
    level = isolation_level()
    pids = process_cap_available()
    model = model_path(config.models_dir)
    gpu = ", ".join(f"{g.name} ({g.memory_gib:.0f} GiB)" for g in hw.gpus) or "none (NVML)"
    rows = [
        ("python", platform.python_version(), ""),
        ("cpu", f"{hw.physical_cores or '?'} cores, {hw.cpu_threads} threads", ""),
        ("memory", f"{hw.memory_gib:.1f} GiB" if hw.memory_gib else "unknown", ""),
        ("gpu", gpu, ""),
        ("home", str(config.home), ""),
        (
            "sandbox",
            level,
            "" if level == "bubblewrap" else "install bubblewrap for namespace isolation",
        ),
        (
            "process cap",
            "pids cgroup" if pids else "none",
            ""
            if pids
            else "fork bombs are only stopped by the timeout (as root RLIMIT_NPROC does not apply)",
        ),
        ("bwrap", shutil.which("bwrap") or "not found", ""),
        (
            "syscall filter",
            "seccomp (ptrace, process memory, kernel interfaces refused)"
            if seccomp_filter() is not None
            else "none",
            ""
            if seccomp_filter() is not None
            else "install libseccomp2 to refuse ptrace in the sandbox (Debian: libseccomp2)",
        ),
        (
            "default model",
            f"{DEFAULT_MODEL.name} ({'assembled' if model.is_file() else 'not assembled'})",
            "" if model.is_file() else "run: lar model install",
        ),
        ("interpreter", sys.executable, ""),
    ]
    from lar.memory import EmbedderMissing, minilm_dir
    from lar.telemetry import available_collectors

    collectors = [c.name for c in available_collectors()]
    rows.append(
        (
            "energy collectors",
            ", ".join(collectors) or "none",
            "" if collectors else "no RAPL counters readable and no NVIDIA GPU: energy is null",
        )
    )
    try:
        rows.append(("memory embedder", f"all-minilm-l6-v2 ({minilm_dir()})", ""))
    except EmbedderMissing as exc:
        rows.append(("memory embedder", "missing", str(exc)))
    rows.append(("router", f"{config.router.policy}: {', '.join(config.candidates())}", ""))
    db = config.home / "lar.db"
    problems = check(db)
    rows.append(
        (
            "database",
            f"{db}: " + ("; ".join(problems) if problems else "integrity ok"),
            "run `lar doctor --repair` to move it aside and start a new one" if problems else "",
        )
    )
    return rows


def repair(config: LarConfig) -> str | None:
    """Move a damaged ``lar.db`` aside (kept, never deleted); what was done, or ``None``."""
    db = config.home / "lar.db"
    problems = check(db)
    if not problems:
        return None
    if db.is_dir():
        target = db.with_name(f"{db.name}.corrupt-dir")
        db.rename(target)
    else:
        target = move_aside(db)
    return f"{db} was damaged ({'; '.join(problems)}): moved to {target}; a new one starts empty"


def print_doctor(config: LarConfig, *, write: bool = True, fix: bool = False) -> bool:
    """Print the checks (after repairing, with ``fix``); false when something needs repair."""
    out = Console(highlight=False)
    if fix:
        done = repair(config)
        out.print(done or "nothing to repair")
    hw = detect()
    table = Table("check", "value", "advice")
    healthy = True
    for name, value, advice in doctor_rows(config, hw):
        table.add_row(name, value, advice)
        healthy = healthy and not (name == "database" and advice)
    out.print(table)
    if write:
        path, why = write_recommended(config, hw)
        out.print(f"recommended config written to {path} (copy it to config.yaml to use it):")
        for w in why:
            out.print(f"  - {w}")
    return healthy
