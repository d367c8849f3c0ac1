"""One agent, many sessions at once (issue 17, Must show 2): a Runner is shared, an Agent is a
description, and each Session's runs keep their own model, state, task and trace."""

from __future__ import annotations

import asyncio
import gc
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from lar import Agent, tool
from lar.agents.runner import Runner
from lar.agents.state import TaskStore
from lar.config import load_config
from lar.testing import MockOpenAIServer, text_reply, tool_call_reply
from lar.traces import TraceStore


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _server(name: str) -> MockOpenAIServer:
    """Calls add with the request's two numbers, then answers with the result and its name."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if messages[-1]["role"] == "tool":
            return text_reply(f"{name} says {messages[-1]['content']}")
        user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        a, b = map(int, re.findall(r"\d+", user)[-2:])
        return tool_call_reply("add", {"a": a, "b": b}, call_id="call_0")

    return MockOpenAIServer([reply], repeat_last=True)


def test_ten_concurrent_sessions_of_one_agent_on_two_engines(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with _server("alpha") as a, _server("beta") as b:
        (home / "config.yaml").write_text(
            "model: alpha\nrouter: {policy: fixed}\nmodels:\n"
            f"  - {{name: alpha, engine: openai, base_url: '{a.url}', track: native}}\n"
            f"  - {{name: beta, engine: openai, base_url: '{b.url}', track: native}}\n"
        )
        config = load_config(home=home)
        tasks, traces = TaskStore(home / "lar.db"), TraceStore(home / "lar.db")
        runner = Runner(config=config, tasks=tasks, traces=traces)
        agent = Agent(tools=[add])
        sessions = [
            runner.session(agent, model="alpha" if i % 2 else "beta", workspace=tmp_path)
            for i in range(10)
        ]

        async def everyone() -> tuple[list[Any], list[Any]]:
            try:
                results = await asyncio.gather(
                    *(s.arun(f"What is {100 + i} + {7 * i}?") for i, s in enumerate(sessions))
                )
                return results, [traces.get(r.run_id) for r in results]
            finally:
                for s in sessions:
                    s.close()
                await runner.aclose()  # the engines' clients belong to this event loop

        results, kept = asyncio.run(everyone())
        assert len(a.requests) == len(b.requests) == 10  # two model calls per run on each
    for i, (session, result, trace) in enumerate(zip(sessions, results, kept, strict=True)):
        name = "alpha" if i % 2 else "beta"
        assert result.text == f"{name} says {100 + i + 7 * i}", (i, result.text)
        assert [c.result for c in result.tool_calls] == [100 + i + 7 * i]
        task = tasks.get(result.run_id)
        assert task.status == "succeeded" and task.request == f"What is {100 + i} + {7 * i}?"
        assert trace.session == session.session_id and trace.model == name
        assert trace.query == task.request and trace.answer == result.text
    assert len({r.run_id for r in results}) == 10
    assert agent.model is None  # the description is untouched by the sessions' choices
    gc.collect()  # a connection left open would warn here, in this test


def test_an_agent_is_immutable_and_replace_makes_a_copy() -> None:
    agent = Agent(tools=[add], max_turns=3)
    with pytest.raises(AttributeError, match="replace"):
        agent.max_turns = 5  # type: ignore[misc]
    other = agent.replace(max_turns=5, tools=[])
    assert (agent.max_turns, len(agent.tools)) == (3, 1)
    assert (other.max_turns, other.tools) == (5, ())
    with pytest.raises(TypeError, match="unknown"):
        agent.replace(engine=None)


def test_constructing_an_agent_does_no_io(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No config read, no database, no engine until something runs."""
    monkeypatch.setenv("LAR_HOME", str(tmp_path / "nowhere"))
    (tmp_path / "nowhere").mkdir()
    (tmp_path / "nowhere" / "config.yaml").write_text("model: [unclosed\n")  # would fail to load
    agent = Agent(tools=[add], memory=True)
    assert agent.tools[0].name == "add"
    assert not (tmp_path / "nowhere" / "lar.db").exists()


def test_a_runner_collected_while_another_loop_runs_still_closes_its_connections(
    tmp_path: Path,
) -> None:
    """The garbage collector may finalize a runner in the middle of someone else's event loop;
    its own loop cannot run in that thread, but its engines' sockets must still be closed."""
    with _server("alpha") as a:
        runner = Runner(
            base_url=a.url, model="alpha", tasks=TaskStore(tmp_path / "t.db"), traces=False
        )
        session = runner.session(Agent(tools=[add]), workspace=tmp_path)
        assert session.run("What is 2 + 3?").text == "alpha says 5"
        held: list[Any] = [runner, session]
        del runner, session
        caught: list[Any] = []
        hook, sys.unraisablehook = sys.unraisablehook, caught.append

        async def elsewhere() -> None:
            held.clear()
            for _ in range(3):
                gc.collect()

        try:
            asyncio.run(elsewhere())
            for _ in range(3):
                gc.collect()
        finally:
            sys.unraisablehook = hook
    assert [str(c.exc_value) for c in caught] == []
