"""What ``lar serve`` adds to a request, under 100 concurrent sessions (issue: Lar as a service).

The server runs in its own process on loopback with the real hub (task store and traces in a
real lar.db, the agent loop, the guard) on an engine that answers after a fixed delay, like a
model that takes ``--engine-ms`` per reply. The client (this process) keeps ``--sessions``
sessions busy, each sending its next request when the last is answered, until ``--requests``
are done. Added latency = client-observed latency − the engine's own delay. Resident memory of
the server process is read from /proc after a warm-up and at the end.

    .venv/bin/python bench/server.py                 # 100 sessions, 10,000 requests
    .venv/bin/python bench/server.py --requests 2000 # a shorter run (not written to BENCHMARKS)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _report import write_section  # noqa: E402

SERVER = r"""
import asyncio, contextvars, json, sys, time, uvicorn
from lar.config import load_config
from lar.engines.base import Engine, StreamChunk
from lar.server import Hub, create_app
from lar.types import ModelResponse, Usage

class Delayed(Engine):
    kind = "scripted"
    name = model = "bench"
    def __init__(self, seconds):
        self.seconds = seconds
    async def stream(self, messages, tools=None, **params):
        # the client knows each request's delay too (engine_time in the bench)
        i, n = (int(x) for x in messages[-1].content.split()[1:4:2])
        t0 = time.perf_counter()
        await asyncio.sleep(engine_time(self.seconds, i, n))
        holder.get()["engine"] = time.perf_counter() - t0
        text = "Done."
        yield StreamChunk(text)
        yield StreamChunk(response=ModelResponse(content=text, usage=Usage(100, 2), model="bench"))

def engine_time(mean, i, n):
    return mean * (0.5 + ((i * 7919 + n * 104729) % 1000) / 1000)

holder = contextvars.ContextVar("holder")
added = []

def timed(app):
    # time in this process from request to response, less the engine's own time
    async def wrapper(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/bench-added":
            body = json.dumps(added).encode()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": body})
            return
        box = {}
        holder.set(box)
        t0 = time.perf_counter()
        await app(scope, receive, send)
        if "engine" in box:
            added.append((time.perf_counter() - t0 - box["engine"]) * 1000)
    return wrapper

port, seconds = int(sys.argv[1]), float(sys.argv[2])
hub = Hub(load_config(), engine=Delayed(seconds), memory=False)
app = timed(create_app(hub, probe_on_start=False))
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def load(
    clients: list[httpx.AsyncClient],
    warm: int,
    requests: int,
    engine_s: float,
    stream_every: int,
    at_warm: Callable[[], Awaitable[None]],
) -> tuple[list[float], int, list[str]]:
    """``warm + requests`` requests, ``len(clients)`` in flight at any time; latencies and
    errors of the last ``requests`` only (the first burst, all sessions at once, is warm-up).
    ``at_warm`` runs when the warm-up's requests have all been sent."""
    latencies: list[float] = []
    errors: list[str] = []
    sent = 0

    async def session(i: int) -> None:
        nonlocal sent
        n = 0
        client = clients[i]
        while sent < warm + requests:
            sent += 1
            if sent == warm + 1:
                await at_warm()
            counted = sent > warm
            n += 1
            body = {
                "user": f"bench-{i}",
                "messages": [{"role": "user", "content": f"Session {i} request {n}"}],
                "stream": stream_every > 0 and n % stream_every == 0,
            }
            t0 = time.perf_counter()
            try:
                r = await client.post("/v1/chat/completions", json=body)
                if r.status_code != 200 or "Done." not in r.text:
                    errors.append(f"{r.status_code}: {r.text[:120]}")
                    continue
            except httpx.HTTPError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            if counted:
                spent = time.perf_counter() - t0
                latencies.append((spent - engine_time(engine_s, i, n)) * 1000)

    await asyncio.gather(*(session(i) for i in range(len(clients))))
    return latencies, len(errors), errors[:3]


async def measure(
    url: str, sessions: int, requests: int, engine_s: float, stream_every: int, pid: int
) -> tuple[list[float], list[float], int, list[str], float, float, float, float]:
    """Warm-up (connections open, sessions made, the first burst of all sessions at once)
    flowing into the measured run: client latencies, the server's own added times, errors,
    RSS before and after, the server's CPU seconds and the wall time."""
    # One client (one connection) per session, made before the clock starts: a shared pool
    # of 100 connections, or 100 clients made on the fly, cost the client more than the
    # server costs (seen here as seconds of "latency" on the first requests).
    headers = {"Authorization": "Bearer bench"}
    clients = [
        httpx.AsyncClient(base_url=url, timeout=120, headers=headers) for _ in range(sessions)
    ]
    mark: dict[str, float] = {}

    async def at_warm() -> None:
        mark["skip"] = len((await clients[0].get("/bench-added")).json())
        mark["rss"], mark["cpu"], mark["t0"] = rss_mb(pid), _cpu_s(pid), time.perf_counter()

    try:
        latencies, errors, examples = await load(
            clients, 2 * sessions, requests, engine_s, stream_every, at_warm
        )
        wall = time.perf_counter() - mark["t0"]
        cpu, after = _cpu_s(pid) - mark["cpu"], rss_mb(pid)
        inside = (await clients[0].get("/bench-added")).json()[int(mark["skip"]) :]
    finally:
        for c in clients:
            await c.aclose()
    return latencies, inside, errors, examples, mark["rss"], after, cpu, wall


def engine_time(mean: float, i: int, n: int) -> float:
    """The engine's own time for request ``n`` of session ``i``: 0.5–1.5 × the mean, spread so
    that sessions do not move in lockstep (as real replies of different lengths do not)."""
    return mean * (0.5 + ((i * 7919 + n * 104729) % 1000) / 1000)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--engine-ms", type=float, default=1000.0)
    ap.add_argument("--stream-every", type=int, default=10, help="every Nth request streams")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="lar-bench-server-"))
    port = free_port()
    env = {**os.environ, "LAR_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port), str(args.engine_ms / 1000)], env=env
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/health/live", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        latencies, inside, errors, examples, before, after, cpu, wall = asyncio.run(
            measure(
                url,
                args.sessions,
                args.requests,
                args.engine_ms / 1000,
                args.stream_every,
                proc.pid,
            )
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    rows = [
        ("sessions at once", f"{args.sessions}"),
        (
            "requests",
            f"{len(latencies) + errors:,} "
            f"({args.stream_every and 100 // args.stream_every}% streamed)",
        ),
        ("engine's own time per request", f"{args.engine_ms:.0f} ms"),
        ("added by the server, p50", f"{statistics.median(inside):.1f} ms"),
        ("added by the server, p99", f"{pct(inside, 99):.1f} ms"),
        ("added by the server, max", f"{max(inside):.1f} ms"),
        ("added as the client saw it, p50", f"{statistics.median(latencies):.1f} ms"),
        ("added as the client saw it, p99", f"{pct(latencies, 99):.1f} ms"),
        ("errors", f"{errors}"),
        ("server CPU per request", f"{cpu / max(1, len(latencies)) * 1000:.2f} ms"),
        ("throughput", f"{len(latencies) / wall:.0f} requests/s"),
        ("server RSS after warm-up", f"{before:.1f} MB"),
        ("server RSS after the run", f"{after:.1f} MB ({after - before:+.1f} MB)"),
    ]
    table = "| measure | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    print(table)
    if examples:
        print("errors, e.g.:", *examples, sep="\n  ")
    if not args.no_write and args.requests >= 10_000:
        note = (
            "`python bench/server.py`: a `lar serve` process on loopback (hub, guard, task "
            "store and traces in a real lar.db, memory off) on an engine that answers after a "
            f"{args.engine_ms:.0f} ms on average (0.5–1.5×, so that sessions do not move in "
            f"lockstep); {args.sessions} sessions keep one request each in flight. Added by the "
            "server = time in the server process from request to response − the engine's own "
            "time; the client (this script, on the same 2-core machine) sees that plus its own "
            "overhead.\n\n"
        )
        write_section("server", note + table)


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
