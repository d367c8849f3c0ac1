"""Throughput of ``lar batch`` on the local executor and on Ray (issue: agent kinds and teams).

200 requests (half call the ``calculate`` tool, half answer at once) against one model endpoint
on 127.0.0.1 that every worker shares and that answers after ``--engine-ms`` per call, like a
served model. Each executor runs the same file in its own ``lar batch`` process, side by side
in one run; Ray starts a local instance for its run (its start-up is in its time). The results
of the two runs are compared field by field.

    .venv/bin/python bench/batch.py                 # writes BENCHMARKS.md
    .venv/bin/python bench/batch.py --requests 50   # a shorter run (not written)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _report import write_section  # noqa: E402

from lar.testing import MockOpenAIServer, adding_reply  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--engine-ms", type=float, default=50.0)
    args = parser.parse_args()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(args.engine_ms / 1000)  # a served model's time per call
        return adding_reply(body)

    rows = []
    with tempfile.TemporaryDirectory() as tmp, MockOpenAIServer([reply], repeat_last=True) as srv:
        home, work = Path(tmp) / "home", Path(tmp)
        home.mkdir()
        (home / "config.yaml").write_text(
            f"model: mock\nmodels:\n  - {{name: mock, engine: openai, base_url: '{srv.url}'}}\n"
        )
        reqs = work / "reqs.jsonl"
        reqs.write_text(
            "\n".join(
                json.dumps({"id": f"r{i}", "text": f"add {i} and {i * 7}" if i % 2 else f"hi {i}"})
                for i in range(args.requests)
            )
            + "\n"
        )
        outs = {}
        for executor in ("local", "ray"):
            out = work / f"{executor}.jsonl"
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "lar", "batch", str(reqs), "--out", str(out),
                 "--executor", executor, "--parallel", str(args.parallel)],
                capture_output=True, text=True, env={**os.environ, "LAR_HOME": str(home)},
                cwd=work, timeout=3600,
            )  # fmt: skip
            wall = time.perf_counter() - t0
            if done.returncode != 0:
                sys.exit(f"{executor}: {done.stderr}")
            ran = re.search(r"ran (\d+) in ([\d.]+) s, the first after ([\d.]+) s", done.stderr)
            assert ran is not None, done.stderr
            outs[executor] = {
                json.loads(line)["id"]: _same(json.loads(line)) for line in out.open()
            }
            rows.append((executor, int(ran[1]), float(ran[2]), float(ran[3]), wall))
    identical = outs["local"] == outs["ray"]
    lines = [
        "| executor | parallel | requests | run (s) | requests/s | first result (s) "
        "| requests/s after the first | process wall (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for executor, n, took, head, wall in rows:
        steady = (n - 1) / (took - head) if took > head else 0.0
        lines.append(
            f"| {executor} | {args.parallel} | {n} | {took:.1f} | {n / took:.1f} | {head:.1f} "
            f"| {steady:.1f} | {wall:.1f} |"
        )
    table = "\n".join(lines)
    note = (
        f"Results identical between the executors: {'yes' if identical else 'NO'} "
        f"({len(outs['local'])} requests; answer, stop reason, tool calls, turns). Engine: "
        f"{args.engine_ms:.0f} ms per call on 127.0.0.1, half the requests make two calls. "
        "'run' is from the first request to the last result (Ray's includes starting its "
        "local instance and workers); 'process wall' adds Lar's start-up. On one machine "
        f"({os.cpu_count()} cores) the local executor's sessions share one process and wait on "
        "the endpoint together; each Ray worker is a process that builds the agent once and "
        "runs one request at a time. Ray is for spreading a batch over machines."
    )
    print(table)
    print(note)
    if args.requests == 200 and identical:
        title = f"Batch throughput (`.venv/bin/python bench/batch.py`, {time.strftime('%Y-%m-%d')})"
        write_section("batch", f"### {title}\n\n{table}\n\n{note}")
    if not identical:
        sys.exit(1)


def _same(item: dict[str, Any]) -> tuple[Any, ...]:
    calls = tuple((c["name"], json.dumps(c["arguments"]), c["ok"]) for c in item["tool_calls"])
    return item["ok"], item["text"], item["stop_reason"], calls, item["turns"]


if __name__ == "__main__":
    main()
