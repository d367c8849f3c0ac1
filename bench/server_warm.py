"""The README question via ``lar run`` cold (no server: the model loads, the whole prompt is
computed) and through a running ``lar serve`` (warm: model loaded, prompt prefix in llama.cpp's
cache), on the embedded model. Wall time of the command, and prompt tokens the engine actually
computed (llama.cpp's ``prompt_n``) against those it reused from its cache (``cache_n``), and
the floor: llama.cpp's own prefill and decode time for those tokens, from the same run.

    .venv/bin/python bench/server_warm.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))
from _report import write_section  # noqa: E402
from tests.server._process import lar_serve  # noqa: E402

QUESTION = "What version does pyproject.toml declare?"


def run(home: Path, *flags: str) -> dict[str, float]:
    env = {**os.environ, "LAR_HOME": str(home)}
    t0 = time.perf_counter()
    out = subprocess.run(
        [str(ROOT / ".venv/bin/lar"), "run", "--json", *flags, QUESTION],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"lar run failed ({out.returncode}): {out.stderr[-500:]}")
    evaluated = cached = sent = calls = decoded = engine_ms = 0.0
    answer = ""
    for line in out.stdout.splitlines():
        event = json.loads(line)
        if event["type"] == "model_called":
            sent += event["usage"]["prompt_tokens"]
            evaluated += event["timings"].get("prompt_evaluated") or 0
            cached += event["timings"].get("prompt_cached") or 0
            decoded += event["usage"]["completion_tokens"]
            engine_ms += (event["timings"].get("prompt_ms") or 0) + (
                event["timings"].get("decode_ms") or 0
            )
            calls += 1
        elif event["type"] == "final":
            answer = event["text"]
    if "0.1.0" not in answer:
        raise SystemExit(f"unexpected answer: {answer!r}")
    return {
        "wall": wall,
        "calls": calls,
        "sent": sent,
        "evaluated": evaluated,
        "cached": cached,
        "decoded": decoded,
        "floor": engine_ms / 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(
            "Time the README question through `lar run --local` (cold) and through a running "
            "`lar serve` (first request, then warm), all in one fresh home, on the embedded "
            "model; every run must answer 0.1.0. Prints a table and writes it to BENCHMARKS.md "
            "(section server-warm). Takes about 12 minutes on 2 cores; run it alone."
        )
    )
    parser.add_argument("--runs", type=int, default=3, help="cold and warm runs each (default 3)")
    args = parser.parse_args()
    models = Path(os.environ.get("LAR_HOME", "~/.lar")).expanduser() / "models"
    home = Path(tempfile.mkdtemp(prefix="lar-bench-warm-"))
    (home / "models").symlink_to(models, target_is_directory=True)
    rows: list[tuple[str, list[dict[str, float]]]] = []
    rows.append(
        ("`lar run --local` (cold, no server)", [run(home, "--local") for _ in range(args.runs)])
    )
    with lar_serve(home, cwd=ROOT, wait_s=300):
        first = [run(home)]
        rows.append(("through `lar serve`, first request", first))
        rows.append(("through `lar serve`, warm", [run(home) for _ in range(args.runs)]))
    lines = [
        "| how | runs | wall time (median) | model calls | prompt tokens sent | computed "
        "| from cache | generated | floor | wall / floor |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, results in rows:
        med = {k: statistics.median(r[k] for r in results) for k in results[0]}
        lines.append(
            f"| {name} | {len(results)} | {med['wall']:.1f} s | {med['calls']:.0f} | "
            f"{med['sent']:.0f} | {med['evaluated']:.0f} | {med['cached']:.0f} | "
            f"{med['decoded']:.0f} | {med['floor']:.1f} s | {med['wall'] / med['floor']:.2f}× |"
        )
    table = "\n".join(lines)
    print(table)
    note = (
        f'`python bench/server_warm.py`: "{QUESTION}" in this repository, on the embedded '
        "default model (2 CPU cores). Wall time of the whole `lar run` command; prompt tokens "
        "per run as sent, as llama.cpp computed them, and as it took them from its cache (in "
        "memory, or for `lar run` from the last process's prompt kept on disk: "
        "`models[].prompt_cache`). Floor = llama.cpp's own prefill and decode time for the "
        "tokens that run computed and generated, measured in the same run; wall / floor is "
        "what process start, model load, Lar and the CLI add.\n\n"
    )
    write_section("server-warm", note + table)


if __name__ == "__main__":
    main()
