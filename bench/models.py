"""Bundled models compared: load time, prompt and decode speed, and a six-task tool-use check.

    python bench/models.py [--no-write]

The evidence behind the default-model choice (README, "The default model"). Each model runs the
same six tasks with the built-in tools plus ``add`` in a scratch workspace, greedy decoding; a
task counts when the answer holds the expected value and a tool was used. Needs the `model` and
`tiny` extras. Results go into BENCHMARKS.md between the models markers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _report import write_section

from lar import Agent, tool
from lar.config import LarConfig
from lar.engines.default_model import DEFAULT_MODEL, TINY_MODEL, ensure_model
from lar.engines.llamacpp import LlamaCppEngine
from lar.tools.builtin import builtin_tools
from lar.types import ModelCalled

TASKS = [
    ("What is 1234 + 4321?", "5555"),
    ("What is 1234 + 4321? Then add 10 to that.", "5565"),
    ("What version does pyproject.toml declare?", "0.3.7"),
    ("What is 1234 * 5678? Use code_run.", "7006652"),
    ("Read notes.txt and tell me who I must call.", "Anna"),
    ("What is the square root of 1521? Use code_run.", "39"),
]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    home = Path(os.environ.get("LAR_HOME", "~/.lar")).expanduser()
    ws = Path(tempfile.mkdtemp(prefix="lar-bench-"))
    (ws / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.3.7"\n')
    (ws / "notes.txt").write_text("buy milk\ncall Anna at 5pm\n")
    rows = []
    for spec in (DEFAULT_MODEL, TINY_MODEL):
        path = ensure_model(home / "models", spec)
        engine = LlamaCppEngine(
            path=path, name=spec.name, defaults={"temperature": 0, "max_tokens": 200}
        )
        t0 = time.perf_counter()
        agent = Agent(
            tools=[add, *builtin_tools()],
            engine=engine,
            config=LarConfig(home=home),
            workspace=ws,
            approver=lambda c, t: True,
        )
        agent.runner.event_loop().run_until_complete(engine.load())
        load_s = time.perf_counter() - t0
        passed, prefill, decode, latencies = 0, [], [], []
        for question, expected in TASKS:
            t = time.perf_counter()
            result = agent.run(question)
            latencies.append(time.perf_counter() - t)
            passed += expected in result.text and bool(result.tool_calls)
            for e in result.events:
                tm = e.timings if isinstance(e, ModelCalled) else None
                if tm and tm.prompt_ms and tm.decode_ms and tm.prompt_evaluated:
                    # tokens llama.cpp computed, not the prompt's length: most of a later
                    # turn's prompt comes from its cache (this column said 385 when it did not)
                    prefill.append(tm.prompt_evaluated / tm.prompt_ms * 1000)
                    decode.append(e.usage.completion_tokens / tm.decode_ms * 1000)
        agent.close()
        rows.append(
            (
                spec,
                load_s,
                statistics.median(prefill),
                statistics.median(decode),
                statistics.median(latencies),
                passed,
            )
        )
    lines = [
        f"Bundled models on this machine ({os.cpu_count()} CPU threads, greedy decoding, "
        "`python bench/models.py`)",
        "",
        "| model | GGUF size | load s | prompt tok/s | decode tok/s | median s/task "
        "| tool tasks passed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for spec, load_s, pre, dec, lat, passed in rows:
        lines.append(
            f"| {spec.name} | {spec.size / 1e6:.0f} MB | {load_s:.1f} | {pre:.0f} | "
            f"{dec:.1f} | {lat:.1f} | {passed}/{len(TASKS)} |"
        )
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        write_section("models", table)


if __name__ == "__main__":
    main()
