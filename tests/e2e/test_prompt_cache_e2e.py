"""The last prompt's KV cache kept between processes (lar.engines.llamacpp.PromptCache)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _run(cwd: Path, question: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "lar", "run", "--json", "--no-memory", question],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=400,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def _first_call(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "model_called")["timings"]


@pytest.mark.timeout(900)  # three cold-ish processes at about 17 prompt tokens a second
def test_a_second_process_starts_from_the_first_ones_prompt(lar_home: Path, tmp_path: Path) -> None:
    first = _first_call(_run(tmp_path, "What is 17 + 25?"))
    assert not first["prompt_cached"]  # a fresh home: nothing to start from
    [kept] = (lar_home / "cache" / "prompts").glob("*.kv")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # it holds the prompt's tokens

    events = _run(tmp_path, "What is 31 + 12?")
    second = _first_call(events)
    # the system prompt and the tool listing (hundreds of tokens) come from the file
    assert second["prompt_cached"] >= 300, second
    assert second["prompt_evaluated"] < first["prompt_evaluated"] / 2, (first, second)
    assert "43" in next(e for e in events if e["type"] == "final")["text"]

    kept.write_bytes(b"not a llama.cpp slot file")  # torn, or from another build
    events = _run(tmp_path, "What is 8 + 9?")
    assert not _first_call(events)["prompt_cached"]
    assert "17" in next(e for e in events if e["type"] == "final")["text"]
    assert kept.read_bytes() != b"not a llama.cpp slot file"  # replaced by a good one

    (lar_home / "config.yaml").write_text(
        "models:\n  - {name: default, engine: llamacpp, prompt_cache: false}\n"
    )
    kept.unlink()
    _run(tmp_path, "What is 2 + 2?")
    assert not list((lar_home / "cache" / "prompts").glob("*.kv"))
