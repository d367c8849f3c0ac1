"""Batch runs (Z2): one request per JSONL line, one result per line, resumable.

Each request runs in a session of its own (no shared history). Results are appended and
flushed to disk as each run ends, so a batch killed half-way keeps what finished, and running it
again skips those ids (a line cut off by the kill is dropped first). Two executors give the same
results for the same inputs: ``local`` (sessions at once on this process's runner) and ``ray``
(Ray tasks on a local Ray instance started here, or on an existing cluster; each worker builds
the agent once from a picklable recipe and may share an engine endpoint such as vLLM, Z1).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lar.errors import LarError

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.results import RunResult

__all__ = [
    "BatchRequest",
    "BatchFileError",
    "read_requests",
    "finished",
    "ResultLog",
    "run_local",
    "run_ray",
    "result_of",
    "RayMissing",
]

MAX_TEXT = 100_000


@dataclass(frozen=True, slots=True)
class BatchRequest:
    id: str
    text: str
    line: int


class BatchFileError(LarError):
    """A requests file Lar cannot run: every bad line, by file and line number."""

    def __init__(self, path: Path, problems: Sequence[str]) -> None:
        shown = "\n".join(f"{path}:{p}" for p in problems[:20])
        more = f"\n… and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{len(problems)} bad line(s); nothing was run:\n{shown}{more}")
        self.problems = list(problems)


class RayMissing(LarError):
    pass


def read_requests(path: Path) -> list[BatchRequest]:
    """The requests of a JSONL file: ``{"id": "a1", "text": "…"}`` per line (``id`` optional:
    the line number), or a bare JSON string. Every problem is collected before any run."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LarError(f"{path}: cannot be read ({exc})") from exc
    requests: list[BatchRequest] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            problems.append(f"{n}: not JSON ({exc.args[0]})")
            continue
        if isinstance(value, str):
            value = {"text": value}
        if not isinstance(value, dict):
            problems.append(f'{n}: expected {{"text": "..."}} or a string')
            continue
        text, rid = value.get("text"), value.get("id", str(n))
        if not isinstance(text, str) or not text.strip():
            problems.append(f'{n}: "text" must be a non-empty string')
            continue
        if len(text) > MAX_TEXT:
            problems.append(f'{n}: "text" is {len(text)} characters; at most {MAX_TEXT}')
            continue
        if not isinstance(rid, str | int) or isinstance(rid, bool):
            problems.append(f'{n}: "id" must be a string or an integer')
            continue
        rid = str(rid)
        if rid in seen:
            problems.append(f"{n}: id {rid!r} repeats line {seen[rid]}")
            continue
        seen[rid] = n
        requests.append(BatchRequest(rid, text, n))
    if problems:
        raise BatchFileError(path, problems)
    return requests


def finished(out: Path) -> dict[str, dict[str, Any]]:
    """The results already in ``out`` by id; a last line cut off by a kill is removed."""
    if not out.exists():
        return {}
    data = out.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with out.open("r+b") as f:
            f.truncate(end)
    done: dict[str, dict[str, Any]] = {}
    for line in data[:end].splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "id" in item:
            done[str(item["id"])] = item
    return done


class ResultLog:
    """Appends one result a line, on disk before the next is written."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._f = path.open("a", encoding="utf-8")

    def write(self, result: dict[str, Any]) -> None:
        self._f.write(json.dumps(result, ensure_ascii=False, default=str) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


def result_of(
    request: BatchRequest, run: RunResult | None, error: str | None = None
) -> dict[str, Any]:
    """One line of the results file."""
    if run is None:
        return {"id": request.id, "ok": False, "error": error or "failed", "text": ""}
    return {
        "id": request.id,
        "ok": run.stop_reason == "answer",
        "text": run.text,
        "stop_reason": run.stop_reason,
        "tool_calls": [
            {"name": c.name, "arguments": c.arguments, "ok": c.ok} for c in run.tool_calls
        ],
        "turns": run.turns,
        "tokens": run.usage.total_tokens,
        "latency_ms": round(run.latency_ms, 1),
        "run_id": run.run_id,
    }


OnResult = Callable[[dict[str, Any]], None]


def run_local(
    agent: Agent, requests: Sequence[BatchRequest], parallel: int, on_result: OnResult
) -> None:
    """Each request in a session of its own on ``agent``'s runner, ``parallel`` at once."""
    runner = agent.runner
    loop = runner.event_loop()

    async def main() -> None:
        gate = asyncio.Semaphore(parallel)

        async def one(request: BatchRequest) -> None:
            async with gate:
                session = runner.session(agent)
                try:
                    run = await session.arun(request.text)
                    result = result_of(request, run)
                except LarError as exc:
                    result = result_of(request, None, str(exc))
                finally:
                    session.close()
            on_result(result)

        await asyncio.gather(*(one(r) for r in requests))

    loop.run_until_complete(main())


# --- Ray ------------------------------------------------------------------------------------

_WORKER_AGENTS: dict[Any, Agent] = {}
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch for multi-node clusters; "0" keeps a local instance on 127.0.0.1."""


def _in_worker(recipe: Callable[[], Agent], request: BatchRequest, home: str) -> dict[str, Any]:
    """One request in a Ray worker: the agent built once per worker from ``recipe``."""
    os.environ["LAR_HOME"] = home
    agent = _WORKER_AGENTS.get(recipe)
    if agent is None:
        agent = _WORKER_AGENTS[recipe] = recipe()
    session = agent.runner.session(agent)
    try:
        return result_of(request, session.run(request.text))
    except LarError as exc:
        return result_of(request, None, str(exc))
    finally:
        session.close()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissing(
            "executor 'ray' needs Ray: pip install 'lar[ray]' (or use the local executor)"
        ) from None
    return ray


@dataclass(slots=True)
class RayCluster:
    """Ray for one batch: an existing cluster at ``address``, or a local instance started here
    (and stopped after) with ``num_cpus`` workers."""

    address: str | None
    num_cpus: int
    started: bool = False

    def __enter__(self) -> Any:
        if not self.address:
            # A local instance on loopback only: with clusters off, Ray takes 127.0.0.1 as the
            # node's address and binds every server there (by default: all interfaces). The
            # variable is read when Ray is imported; an earlier import gets the same setting.
            os.environ.setdefault(LOOPBACK_ENV, "0")
            constants = sys.modules.get("ray._private.ray_constants")
            if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
                setattr(constants, "ENABLE_RAY_CLUSTER", os.environ[LOOPBACK_ENV] != "0")  # noqa: B010
        ray = _ray()
        self.started = not ray.is_initialized()
        if self.started:
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "configure_logging": False,
            }
            if self.address:
                ray.init(address=self.address, **options)
            else:
                ray.init(num_cpus=self.num_cpus, object_store_memory=80 * 2**20, **options)
        return ray

    def __exit__(self, *exc: object) -> None:
        if self.started:
            _ray().shutdown()


_SHARED: list[RayCluster] = []


def shared_ray(address: str | None, num_cpus: int) -> Any:
    """Ray for this process's delegate runs: started once (or joined), stopped at exit."""
    if not _SHARED:
        import atexit

        cluster = RayCluster(address, num_cpus)
        ray = cluster.__enter__()
        _SHARED.append(cluster)
        atexit.register(cluster.__exit__)
        return ray
    return _ray()


def _member_in_worker(
    member: Agent, text: str, run_id: str, config: Any, home: str
) -> dict[str, Any]:
    """A delegate's sub-agent in a Ray worker: its own runner (the member's engine, or the
    configured models); its trace goes to ``home``'s lar.db like any run's."""
    from lar.agents.runner import Runner

    os.environ["LAR_HOME"] = home
    own = member._how.engine  # noqa: SLF001 - a member built with an engine of its own
    runner = Runner(config=config, engine=own)
    try:
        session = runner.session(member)
        try:
            loop = runner.event_loop()
            result = loop.run_until_complete(session.arun(text, run_id=run_id))
        except LarError as exc:
            return {"stop_reason": "error", "text": "", "error": str(exc)}
        finally:
            session.close()
        return {"stop_reason": result.stop_reason, "text": result.text, "error": ""}
    finally:
        runner.close()


async def member_on_ray(
    member: Agent, text: str, run_id: str, config: Any, wall: float
) -> dict[str, Any]:
    """``_member_in_worker`` as a Ray task; ``{"timed_out": True}`` past ``wall`` seconds (the
    task is cancelled)."""
    ray = shared_ray(config.ray.address, config.agent.max_parallel)
    task = ray.remote(num_cpus=1, max_retries=0)(_member_in_worker)
    ref = task.remote(member, text, run_id, config, str(config.home))
    try:
        return dict(await asyncio.to_thread(ray.get, ref, timeout=wall))
    except ray.exceptions.GetTimeoutError:
        ray.cancel(ref, force=True)
        return {"timed_out": True}
    except ray.exceptions.RayError as exc:
        return {"stop_reason": "error", "text": "", "error": f"Ray task failed: {exc}"}


def run_ray(
    recipe: Callable[[], Agent],
    requests: Sequence[BatchRequest],
    parallel: int,
    on_result: OnResult,
    *,
    home: Path,
    address: str | None = None,
) -> None:
    """Each request as a Ray task (at most ``parallel`` in flight); results as they come."""
    with RayCluster(address, parallel) as ray:
        task = ray.remote(num_cpus=1, max_retries=0)(_in_worker)
        pending: dict[Any, BatchRequest] = {}
        todo: Iterator[BatchRequest] = iter(requests)
        for request in todo:
            pending[task.remote(recipe, request, str(home))] = request
            if len(pending) >= parallel * 2:
                break
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                request = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as exc:  # a worker that died: the request failed, not the batch
                    result = result_of(request, None, f"Ray task failed: {exc}")
                on_result(result)
                nxt = next(todo, None)
                if nxt is not None:
                    pending[task.remote(recipe, nxt, str(home))] = nxt


def throughput(count: int, started: float) -> float:
    took = time.perf_counter() - started
    return count / took if took > 0 else 0.0
