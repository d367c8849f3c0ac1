"""Attacks through configuration files: YAML aliases that expand to gigabytes ("billion
laughs") are refused with the line at fault, while ordinary anchors and aliases still work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lar.config import load_config
from lar.errors import ConfigError


def _laughs(levels: int) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


def test_a_config_of_nested_aliases_is_refused_before_it_expands(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text(_laughs(9))
    proc = subprocess.run(
        [sys.executable, "-m", "lar", "memory", "list"],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(lar_home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "config.yaml:" in proc.stderr and "aliases" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_few_aliases_are_refused_only_past_the_limit(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text(_laughs(6))  # 9**6 values
    with pytest.raises(ConfigError, match="through its aliases"):
        load_config()


def test_ordinary_anchors_and_aliases_still_load(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text(
        "models:\n"
        "  - &local {name: a, engine: openai, base_url: 'http://127.0.0.1:9/v1'}\n"
        "  - {<<: *local, name: b}\n"
        "model: a\n"
    )
    config = load_config()
    assert {"a", "b"} <= set(config.model_names())
