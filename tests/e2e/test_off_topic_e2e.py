"""The off-topic check on the real embedded model (lar.calling.relevance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lar.agents.agent import Agent
from lar.tools.base import SchemaTool
from lar.types import Notice


def test_a_timer_call_for_a_geography_question_is_refused_and_answered(lar_home: Path) -> None:
    """Suite case abstain-03: the 1.5B calls set_timer for "What is the capital of France?"
    (greedy decoding: every time). The call is refused and the model answers without tools."""
    ran: list[str] = []

    def record(name: str) -> Any:
        return lambda **kw: ran.append(name) or "done"

    timer = SchemaTool(
        "set_timer",
        "Start a countdown timer.",
        {"properties": {"minutes": {"type": "integer"}, "label": {"type": "string"}},
         "required": ["minutes"]},
        record("set_timer"),
    )  # fmt: skip
    alarm = SchemaTool(
        "set_alarm",
        "Set an alarm clock for a time of day (HH:MM, 24h).",
        {"properties": {"time": {"type": "string"}}, "required": ["time"]},
        record("set_alarm"),
    )
    agent = Agent(tools=[timer, alarm], track="protocol", memory=False, traces=False)
    result = agent.run("What is the capital of France?")
    notices = [e for e in result.events if isinstance(e, Notice) and e.code == "off_topic_call"]
    assert notices, "the model answered without calling; the check was not exercised"
    assert "set_timer" in notices[0].message
    assert ran == [] and result.tool_calls == []
    assert "paris" in result.text.lower()


def test_after_a_refused_call_the_answer_comes_from_what_the_model_knows(lar_home: Path) -> None:
    """Suite case abstain-20: the 1.5B calls set_lights for "What color do you get by mixing
    blue and yellow?". Told in answer mode to "answer using that data" where none was fetched,
    it said "Yellow"; told to answer from what it knows, it says green (docs/evals.md)."""
    ran: list[str] = []
    lights = SchemaTool(
        "set_lights",
        "Turn the lights of a room on or off, with a brightness in percent.",
        {"properties": {"room": {"type": "string"}, "on": {"type": "boolean"},
                        "brightness": {"type": "integer", "minimum": 0, "maximum": 100}},
         "required": ["room", "on"]},
        lambda **kw: ran.append("set_lights") or "done",
    )  # fmt: skip
    thermostat = SchemaTool(
        "set_thermostat",
        "Set the heating target temperature in celsius.",
        {"properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
        lambda **kw: ran.append("set_thermostat") or "done",
    )
    agent = Agent(tools=[lights, thermostat], track="protocol", memory=False, traces=False)
    result = agent.run("What color do you get by mixing blue and yellow?")
    refused = [e for e in result.events if isinstance(e, Notice) and e.code == "off_topic_call"]
    assert refused, "the model answered without calling; answer mode was not exercised"
    assert ran == [] and result.tool_calls == []
    assert "green" in result.text.lower()
