"""Shared by the roles tests: the example roles and running `lar` in a real process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_ROLE = ROOT / "examples/roles/contract-prescreen/agent.yaml"
LOG_ROLE = ROOT / "examples/roles/log-triage/agent.yaml"
CONTRACTS = ROOT / "examples/roles/contract-prescreen/contracts"
LOGS = ROOT / "examples/roles/log-triage/logs"


def lar(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"LAR_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def line_of(text: str, needle: str, after: str = "") -> int:
    """The 1-based line of the first ``needle`` after the first ``after``."""
    start = text.index(after) if after else 0
    return text[: text.index(needle, start)].count("\n") + 1
