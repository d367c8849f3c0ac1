"""``lar doctor``: what this machine offers Lar, and which safety level is active (E6, B2)."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lar.config import LarConfig
from lar.engines.default_model import DEFAULT_MODEL, model_path
from lar.tools import sandbox

__all__ = ["doctor_rows", "print_doctor"]


def _memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def doctor_rows(config: LarConfig) -> list[tuple[str, str, str]]:
    """(check, value, advice) rows; advice is empty when all is well."""
    level = sandbox.isolation_level()
    pids = sandbox.process_cap_available()
    model = model_path(config.models_dir)
    rows = [
        ("python", platform.python_version(), ""),
        ("cpu threads", str(os.cpu_count() or "?"), ""),
        ("memory", _memory_gib(), ""),
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
            "default model",
            f"{DEFAULT_MODEL.name} ({'assembled' if model.is_file() else 'not assembled'})",
            "" if model.is_file() else "run: lar model install",
        ),
        ("interpreter", sys.executable, ""),
    ]
    from lar.memory.embed import EmbedderMissing, minilm_dir
    from lar.telemetry.energy import available_collectors

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
    return rows


def print_doctor(config: LarConfig) -> None:
    table = Table("check", "value", "advice")
    for check, value, advice in doctor_rows(config):
        table.add_row(check, value, advice)
    Console().print(table)
