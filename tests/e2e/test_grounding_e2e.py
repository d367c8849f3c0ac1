"""Invented values and the remaining calls on the real embedded model (protocol track).

Both cases are from the eval suites and go the same way on every run (greedy decoding); the
full run on e724ff9 (docs/evals.md) got both right, and both wrong before these steps."""

from __future__ import annotations

from typing import Any

import pytest

from lar.agents.agent import Agent
from lar.evals.toolcalls import build_tools, default_suites, load_suite
from lar.types import Notice

pytestmark = pytest.mark.usefixtures("lar_home")  # a fresh home sharing the assembled model


def run(suite: str, case_id: str) -> Any:
    case = next(c for c in load_suite(default_suites() / f"{suite}.jsonl") if c.id == case_id)
    agent = Agent(
        tools=build_tools(case),
        track="protocol",
        memory=False,
        traces=False,
        approver=lambda call, tool: True,
    )
    try:
        return agent.run(case.question)
    finally:
        agent.close()


def codes(result: Any) -> list[str]:
    return [e.code for e in result.events if isinstance(e, Notice)]


def test_asked_once_the_model_adds_the_second_city() -> None:
    """parallel-01, "Weather in Porto and in Faro?": the 1.5B calls for Porto only; asked for
    the calls the request needs, it names Faro, and both run before the answer."""
    result = run("parallel", "parallel-01")
    assert "more_calls" in codes(result), codes(result)
    cities = [c.arguments["city"] for c in result.tool_calls if c.name == "get_weather"]
    assert cities == ["Porto", "Faro"]


def test_an_email_to_a_made_up_address_is_not_sent() -> None:
    """abstain-04, "Say hello." with send_email and send_sms listed: the 1.5B emails
    example@example.com. The address is in no message, so the call is not run; asked once,
    the model writes the same call, and then answers without tools."""
    result = run("abstain", "abstain-04")
    assert codes(result)[:1] == ["ungrounded_call"], codes(result)
    assert result.tool_calls == [] and result.text.strip()
    assert "hello" in result.text.lower()
