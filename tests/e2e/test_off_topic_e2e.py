"""The off-topic check on the real embedded model (lar.calling.relevance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lar.agents.agent import Agent
from lar.tools.base import SchemaTool


def test_a_geography_question_beside_timer_tools_runs_no_tool(lar_home: Path) -> None:
    """A question no listed tool fits: whether the model reaches for the timer or not, no tool
    runs and the answer comes from what it knows (the request is this test's own, not a suite
    case)."""
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
    result = agent.run("Which city is the capital of Portugal?")
    assert ran == [] and result.tool_calls == []
    assert "lisbon" in result.text.lower()


def test_beside_smart_home_tools_the_answer_comes_from_what_the_model_knows(lar_home: Path) -> None:
    """A colour question beside smart-home tools: no tool runs, and if a call was refused the
    answer mode says to answer from what the model knows (not "from that data", which made it
    repeat the question's own words; docs/evals.md). The request is this test's own."""
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
    result = agent.run("What colour is fresh grass?")
    assert ran == [] and result.tool_calls == []
    assert "green" in result.text.lower()
