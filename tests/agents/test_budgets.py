"""Per-run budgets (A2): a token budget and a time budget each stop a run with their own stop
reason, with what the run found so far and nothing made up."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.types import Code, Message, ModelResponse, Notice, ToolSpec


def call(name: str, **args: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


@tool
def lookup(key: str) -> str:
    """Look a key up in the user's notes."""
    return f"{key} is 42"


def test_a_token_budget_stops_the_run_before_the_next_model_call() -> None:
    engine = ScriptedEngine([call("lookup", key="door code"), "The door code is 42."])
    agent = Agent(tools=[lookup], engine=engine, workspace=Path("."), token_budget=50)
    result = agent.run("what is the door code?")
    assert result.stop_reason == "token_budget"
    assert len(engine.calls) == 1  # the second call would have gone over
    assert result.usage.total_tokens >= 50
    assert "token budget of 50 spent" in result.text
    assert "door code is 42" in result.text  # what the tool found is not lost
    notices = [e for e in result.events if isinstance(e, Notice) and e.code == Code.BUDGET]
    assert len(notices) == 1


def test_without_a_budget_the_same_run_answers() -> None:
    engine = ScriptedEngine([call("lookup", key="door code"), "The door code is 42."])
    result = Agent(tools=[lookup], engine=engine, workspace=Path(".")).run("the door code?")
    assert result.stop_reason == "answer" and len(engine.calls) == 2


class SlowEngine(ScriptedEngine):
    """Answers after ``delay`` seconds unless cancelled; records a cancellation."""

    def __init__(self, steps: list[Any], delay: float) -> None:
        super().__init__(steps)
        self.delay = delay
        self.cancelled = 0
        self.max_tokens: list[Any] = []

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        self.max_tokens.append(params.get("max_tokens"))
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return await super().generate(messages, tools, **params)


def test_a_time_budget_cuts_a_model_call_in_progress() -> None:
    engine = SlowEngine(["never seen"], delay=60.0)
    agent = Agent(tools=[lookup], engine=engine, workspace=Path("."), time_budget_s=0.3)
    result = agent.run("what is the door code?")
    assert result.stop_reason == "time_budget"
    assert engine.cancelled == 1
    assert "time budget of 0.3 s spent" in result.text
    assert "never seen" not in result.text


gate = threading.Event()


@tool
def slow_lookup(key: str) -> str:
    """Look a key up in a slow store."""
    gate.wait(2.0)
    return f"{key} is 42"


def test_a_time_budget_spent_during_a_tool_stops_before_the_next_call() -> None:
    engine = ScriptedEngine(
        [call("slow_lookup", key="a") + "\n" + call("slow_lookup", key="b"), "both are 42"]
    )
    agent = Agent(tools=[slow_lookup], engine=engine, workspace=Path("."), time_budget_s=1.0)
    agent = agent.replace(policies=())
    result = agent.run("look up a and b")
    assert result.stop_reason == "time_budget"
    assert len(engine.calls) == 1
    ran = [c.arguments["key"] for c in result.tool_calls]
    assert ran == ["a"]  # b was not started once the budget was spent
    assert "a is 42" in result.text


def test_the_token_budget_caps_a_calls_max_tokens() -> None:
    engine = SlowEngine(["short"], delay=0.0)
    agent = Agent(tools=[lookup], engine=engine, workspace=Path("."), token_budget=10_000)
    agent = agent.replace(policies=())
    assert agent.run("hi").stop_reason == "answer"
    assert engine.max_tokens[0] is not None and engine.max_tokens[0] <= 10_000


def test_budgets_come_from_the_config(tmp_path: Path) -> None:
    from lar.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  token_budget: 50\n  time_budget_s: 30\n")
    engine = ScriptedEngine([call("lookup", key="door code"), "42"])
    agent = Agent(tools=[lookup], engine=engine, workspace=Path("."), config=load_config(path))
    assert agent.settings.budget.tokens == 50 and agent.settings.budget.seconds == 30
    assert agent.run("door code?").stop_reason == "token_budget"
