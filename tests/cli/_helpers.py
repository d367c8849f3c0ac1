"""Helpers for driving the ``lar`` command in a real terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest


def spawn_chat(home: Path, cwd: Path, timeout: int = 60) -> Any:
    """`lar chat` in a pty (pexpect), with only LAR_HOME and PATH in its environment."""
    pexpect = pytest.importorskip("pexpect", reason="pexpect is a dev dependency")
    return pexpect.spawn(
        sys.executable,
        ["-m", "lar", "chat"],
        cwd=str(cwd),
        env={"LAR_HOME": str(home), "PATH": "/usr/bin:/bin", "TERM": "dumb"},
        encoding="utf-8",
        timeout=timeout,
        use_poll=True,  # select() fails on a descriptor numbered past 1023 late in a long run
    )


def configure_mock(home: Path, url: str) -> None:
    (home / "config.yaml").write_text(
        f"model: mock\nmodels:\n  - {{name: mock, engine: openai, base_url: '{url}'}}\n"
    )
