"""Circuit breaker and network-only retries (issue 3, Must show 3), and a free event loop (2)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.tools.base import ToolContext
from lar.tools.breaker import CircuitBreaker
from lar.tools.executor import ToolExecutor
from lar.types import ToolCall


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run(ex: ToolExecutor, name: str, args: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    return asyncio.run(ex.run(ToolCall("c", name, args or {}), ToolContext(workspace=Path("."))))


def test_five_failures_open_the_circuit_then_half_open_trial() -> None:
    calls: list[int] = []
    healthy = {"value": False}

    @tool
    def flaky() -> str:
        """Fails until healthy."""
        calls.append(1)
        if not healthy["value"]:
            raise ValueError("backend broken")
        return "fine"

    clock = Clock()
    ex = ToolExecutor([flaky], breaker=CircuitBreaker(threshold=5, cooldown_s=60, clock=clock))
    for _ in range(5):
        assert run(ex, "flaky").error.code == "tool_error"  # type: ignore[union-attr]
    assert [t.name for t in ex.visible()] == []  # hidden from the model while open
    refused = run(ex, "flaky")
    assert refused.error.code == "circuit_open" and len(calls) == 5  # type: ignore[union-attr]
    assert "retry in 60s" in json.loads(refused.content)["detail"]

    clock.now += 61  # cooldown over: half-open, one trial
    assert [t.name for t in ex.visible()] == ["flaky"]
    assert run(ex, "flaky").error.code == "tool_error"  # type: ignore[union-attr]
    assert run(ex, "flaky").error.code == "circuit_open"  # type: ignore[union-attr]  # reopened

    clock.now += 61
    healthy["value"] = True
    assert run(ex, "flaky").value == "fine"  # trial succeeded: closed again
    assert ex.breaker.state("flaky") == "closed" and len(calls) == 7


def test_success_resets_the_failure_count() -> None:
    outcomes = iter([False] * 4 + [True] + [False] * 4)

    @tool
    def sometimes() -> str:
        """Fails sometimes."""
        if not next(outcomes):
            raise ValueError("no")
        return "ok"

    ex = ToolExecutor([sometimes])
    results = [run(ex, "sometimes").ok for _ in range(9)]
    assert results == [False] * 4 + [True] + [False] * 4
    assert ex.breaker.state("sometimes") == "closed"


def test_network_errors_are_retried_other_errors_are_not() -> None:
    attempts = {"net": 0, "logic": 0}

    @tool
    def fetch() -> str:
        """Network call that recovers on the third try."""
        attempts["net"] += 1
        if attempts["net"] < 3:
            raise ConnectionRefusedError("connection refused")
        return "payload"

    @tool
    def charge() -> str:
        """Not idempotent: must never be retried."""
        attempts["logic"] += 1
        raise ValueError("card declined")

    ex = ToolExecutor([fetch, charge], retries=2, retry_backoff_s=0.0)
    assert run(ex, "fetch").value == "payload" and attempts["net"] == 3
    assert run(ex, "charge").error.code == "tool_error"  # type: ignore[union-attr]
    assert attempts["logic"] == 1


def test_retries_are_bounded() -> None:
    attempts = []

    @tool
    def down() -> str:
        """Always unreachable."""
        attempts.append(1)
        raise ConnectionResetError("reset")

    ex = ToolExecutor([down], retries=2, retry_backoff_s=0.0)
    r = run(ex, "down")
    assert r.error.code == "tool_error" and len(attempts) == 3  # type: ignore[union-attr]


def test_blocking_sync_tool_in_ten_concurrent_runs_leaves_the_loop_free() -> None:
    @tool(timeout_s=5)
    def blocking() -> str:
        """Sleeps one second without yielding (a badly written tool)."""
        time.sleep(1)
        return "slept"

    call = '<tool_call>{"name": "blocking", "arguments": {}}</tool_call>'
    agents = [
        Agent(tools=[blocking], engine=ScriptedEngine([call, "done"]), workspace=Path("."))
        for _ in range(10)
    ]

    async def main() -> tuple[list[str], int]:
        ticks = 0
        stop = asyncio.Event()

        async def heartbeat() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        beat = asyncio.create_task(heartbeat())
        results = await asyncio.gather(*(a.arun("go") for a in agents))
        stop.set()
        await beat
        return [r.text for r in results], ticks

    texts, ticks = asyncio.run(main())
    for a in agents:
        a.executor.close()
    assert texts == ["done"] * 10
    # ten 1-second sleeps ran in threads: a blocked loop would tick ~10 times, a free one ~100+
    assert ticks >= 50


def test_policy_refusals_never_open_the_circuit(tmp_path: Path) -> None:
    """Six refused reads (outside the workspace, missing files) must not block the seventh,
    fitting one: refusals are the call's fault, not a broken tool."""
    from lar.tools.builtin import file_read

    (tmp_path / "ok.txt").write_text("fine")
    ex = ToolExecutor([file_read], breaker=CircuitBreaker(threshold=5, cooldown_s=60))
    ctx = ToolContext(workspace=tmp_path)

    def read(path: str):  # type: ignore[no-untyped-def]
        return asyncio.run(ex.run(ToolCall("c", "file_read", {"path": path}), ctx))

    for path in ["/etc/passwd", "../x", "missing.txt", "/root/.ssh/id_rsa", "nope", "/etc"]:
        assert not read(path).ok
    assert ex.breaker.state("file_read") == "closed"
    assert read("ok.txt").ok
