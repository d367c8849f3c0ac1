"""Lar and its peers on the same generated everyday draw, the same model, in one run.

    python bench/peers_everyday.py --draw 10001 [--per-language 40] [--json F] [--resume]
        [--agents lar,smolagents-tool,smolagents-code,pydantic-ai] [--write]
    python bench/peers_everyday.py --report F [--write]   # the tables of a result file

Every task is set up as Lar's own bench sets it up (``lar.evals.everyday.prepared``: the files,
the pages on 127.0.0.1, an empty home) and scored by the same ``judge``. Lar runs in this
process on the embedded engine with ``lar run``'s defaults; each peer runs in a process of its
own (``bench/peers/agent.py``) with the same plain tools — read, list, write, rename, delete a
file (changes need the task's yes, as in Lar), fetch a loopback page, the clock, to-dos and
reminders, remember and recall — driving the same model served by ``lar model serve`` with the
same temperature, answer length and step limit (``agent.max_turns``).

The peers (smolagents' ToolCallingAgent and CodeAgent, pydantic-ai's Agent) are installed into
an environment of their own (``--venv``, made on first use from ``PEER_PACKAGES``), never into
Lar's. ``--write`` puts the side-by-side table into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEER_PACKAGES = ("smolagents[openai]==1.26.0", "pydantic-ai-slim[openai]==2.68.0")
PEERS = ("smolagents-tool", "smolagents-code", "pydantic-ai")
PEER_TIMEOUT_S = 900
"""A peer's task is stopped after this long and scored as the run it was."""
SERVER_START_S = 180


def ensure_venv(venv: Path) -> Path:
    """The peers' Python, the environment made and filled first if it is not there yet."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import smolagents, pydantic_ai"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"making the peers' environment in {venv}: {', '.join(PEER_PACKAGES)}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *PEER_PACKAGES], check=True)
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(model: str, port: int, n_ctx: int) -> subprocess.Popen[bytes]:
    """``lar model serve`` on 127.0.0.1:port, returned once it answers ``/v1/models``."""
    command = [sys.executable, "-m", "lar", "model", "serve", model, "--port", str(port),
               "--n-ctx", str(n_ctx)]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            error = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise SystemExit(f"lar model serve stopped (exit {server.returncode}): {error[-800:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5):
                return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit(f"lar model serve did not answer on port {port} in {SERVER_START_S} s")


def run_peer(python: Path, peer: str, task: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """One task through one peer: its row, judged as Lar's are."""
    from lar.evals.everyday import judge, prepared

    with prepared(task) as ready:
        job = {**settings, "peer": peer, "request": ready.request, "yes": task.yes,
               "workspace": str(ready.workspace), "home": str(ready.home),
               "memory": list(task.memory)}  # fmt: skip
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [str(python), str(HERE / "peers" / "agent.py")],
                input=json.dumps(job), capture_output=True, text=True, timeout=PEER_TIMEOUT_S,
                cwd=ready.workspace,
            )  # fmt: skip
            out = json.loads(done.stdout) if done.stdout.strip() else {}
            if not out:
                out = {"answer": f"[run failed: {done.stderr.strip()[-400:]}]"}
        except subprocess.TimeoutExpired:
            out = {"answer": f"[run stopped after {PEER_TIMEOUT_S} s]"}
        wall = time.perf_counter() - started
        verdict = judge(task, str(out.get("answer", "")), list(out.get("results", [])), ready)
    return {
        "id": task.id, "category": task.category, "language": task.language, "agent": peer,
        "answer": out.get("answer", ""), "model_calls": int(out.get("model_calls", 0)),
        "prompt_tokens": int(out.get("prompt_tokens", 0)), "wall_s": round(wall, 2),
        "tools": out.get("tools", []), "error": out.get("error", ""), **verdict,
    }  # fmt: skip


def side_by_side(rows: list[dict[str, Any]], agents: list[str], title: str) -> str:
    """Per agent: passed, ungrounded, pasted and English answers, calls and wall time; then
    passed per language and per family, the agents as columns."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by[row["agent"]].append(row)
    lines = [f"**{title}**", "",
             "| agent | tasks | passed | ungrounded | pasted | English to others "
             "| model calls/task (median) | wall s/task (median) |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for agent in agents:
        rs = by.get(agent, [])
        if not rs:
            continue
        ok = sum(r["passed"] for r in rs)
        lines.append(
            f"| {agent} | {len(rs)} | {ok} ({ok / len(rs):.0%}) "
            f"| {sum(bool(r['ungrounded']) for r in rs)} | {sum(bool(r['pasted']) for r in rs)} "
            f"| {sum(bool(r['english']) for r in rs)} "
            f"| {statistics.median(r['model_calls'] for r in rs):g} "
            f"| {statistics.median(r['wall_s'] for r in rs):.1f} |"
        )
    shown = [a for a in agents if by.get(a)]
    for key in ("language", "category"):
        lines += ["", f"| {key} | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
        for value in sorted({r[key] for r in rows}):
            cells = []
            for agent in shown:
                rs = [r for r in by[agent] if r[key] == value]
                ok = sum(r["passed"] for r in rs)
                cells.append(f"{ok}/{len(rs)}" if rs else "–")
            lines.append(f"| {value} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _rows(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    if path.exists():
        for text in path.read_text(encoding="utf-8").splitlines():
            if text.strip():
                row = json.loads(text)
                rows[(row["id"], row["agent"])] = row
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draw", type=int, metavar="SEED", help="the generated draw's seed")
    parser.add_argument("--per-language", type=int, default=40, help="tasks a language")
    parser.add_argument("--agents", default=",".join(("lar", *PEERS)),
                        help="comma-separated: lar and any of " + ", ".join(PEERS))  # fmt: skip
    parser.add_argument("--only", action="append", help="only tasks whose id starts so")
    parser.add_argument("--json", type=Path, default=None, help="append one row per run")
    parser.add_argument("--resume", action="store_true", help="skip runs already in --json")
    parser.add_argument("--venv", type=Path,
                        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "lar" / "peers-venv", help="the peers' own environment")  # fmt: skip
    parser.add_argument("--report", type=Path, default=None, help="only the tables of a file")
    parser.add_argument("--write", action="store_true", help="the table into BENCHMARKS.md")
    args = parser.parse_args()
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = [a for a in agents if a not in ("lar", *PEERS)]
    if unknown:
        parser.error(f"--agents: no agent {unknown[0]!r}; known: lar, {', '.join(PEERS)}")
    if args.report is not None:
        rows = list(_rows(args.report).values())
        title = f"Everyday draw, Lar and its peers on the same model ({args.report.name})"
    else:
        if args.draw is None:
            parser.error("give --draw SEED (or --report FILE)")
        rows = run(args, agents)
        title = (f"Everyday draw {args.draw}, {args.per_language} tasks a language: Lar and its "
                 "peers on the embedded 1.5B (`python bench/peers_everyday.py --draw "
                 f"{args.draw} --per-language {args.per_language}`)")  # fmt: skip
    present = [a for a in ("lar", *PEERS) if any(r["agent"] == a for r in rows)]
    text = side_by_side(rows, present, title)
    print(text)
    if args.write:
        sys.path.insert(0, str(HERE))
        from _report import write_section

        write_section("peers-everyday", text)
    return 0


def run(args: argparse.Namespace, agents: list[str]) -> list[dict[str, Any]]:
    from lar.config import load_config
    from lar.engines import DEFAULT_MODEL, build_engine
    from lar.evals.draws import draw, part_of
    from lar.evals.everyday import EverydayRunner

    tasks = draw(args.draw, per_language=args.per_language)
    if args.only:
        tasks = [t for t in tasks if t.id.startswith(tuple(args.only))]
    print(f"draw {args.draw} ({part_of(args.draw)} seed): {len(tasks)} tasks", file=sys.stderr)
    config = load_config()
    model = config.model_named(config.model)
    settings = {"model": DEFAULT_MODEL.name, "max_steps": config.agent.max_turns,
                "temperature": model.temperature, "max_tokens": model.max_tokens}  # fmt: skip
    done = _rows(args.json) if args.json is not None and args.resume else {}
    peers = [a for a in agents if a != "lar"]
    python = ensure_venv(args.venv) if peers else None
    server = None
    if peers:
        port = _free_port()
        server = start_server(DEFAULT_MODEL.name, port, n_ctx=max(model.n_ctx, 8192))
        settings["base_url"] = f"http://127.0.0.1:{port}/v1"
    runner = None
    if "lar" in agents:
        engine = build_engine(config, None)
        runner = EverydayRunner(config, engine, track="protocol", max_turns=config.agent.max_turns)
        runner.repeatable()
    sink = args.json.open("a", encoding="utf-8") if args.json is not None else None
    rows: list[dict[str, Any]] = []
    try:
        for n, task in enumerate(tasks, 1):
            for agent in agents:
                row = done.get((task.id, agent))
                if row is None:
                    if agent == "lar":
                        assert runner is not None
                        row = {**runner.run(task).row(), "agent": "lar"}
                    else:
                        assert python is not None
                        row = run_peer(python, agent, task, settings)
                    if sink is not None:
                        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                        sink.flush()
                rows.append(row)
                mark = "ok " if row["passed"] else "FAIL"
                print(f"[{n}/{len(tasks)}] {mark} {agent:16} {task.id} ({row['model_calls']} "
                      f"calls, {row['wall_s']:.1f} s)", file=sys.stderr)  # fmt: skip
    finally:
        if sink is not None:
            sink.close()
        if runner is not None:
            runner.close()
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
