"""A percentage of the request passed on the other scale than its parameter takes is put on the
parameter's scale (the percent_scale policy), from figures and the tool's schema only."""

from __future__ import annotations

import json

import pytest

from lar import Agent, tool
from lar.calling.percents import percent_figures, rescaled_percents
from lar.engines.scripted import ScriptedEngine
from lar.types import Code, Notice


def call(name: str, **args: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


IN_PERCENT = {
    "properties": {
        "principal": {"type": "number", "description": "the amount"},
        "rate_percent": {"type": "number", "description": "yearly rate in percent (5 for 5 %)"},
        "years": {"type": "integer"},
    }
}
AS_DECIMAL = {"properties": {"rate": {"type": "number", "description": "the rate as a decimal"}}}
PLAIN = {"properties": {"rate": {"type": "number", "description": "the yearly rate"}}}
MENTIONS = {  # a percent sign or "ratio" in a description says nothing about the scale
    "properties": {
        "amount": {"type": "number", "description": "the amount; a 1% fee is added"},
        "ratio": {"type": "number", "description": "the compression ratio"},
    }
}


def test_percent_figures_in_several_languages() -> None:
    assert percent_figures("a 4.5% rate") == [4.5]
    assert percent_figures("à 4,5 % par an, puis 12 %") == [4.5, 12.0]
    assert percent_figures("年利率4.5％") == [4.5]
    assert percent_figures("1,234 items, 2026-01-03") == []
    assert percent_figures("up 1,000,000% and 4,500 %") == [1000000.0]  # 4,500: ambiguous


@pytest.mark.parametrize(
    ("schema", "args", "request_", "fixed"),
    [
        (
            IN_PERCENT,
            {"principal": 2000, "rate_percent": 0.045, "years": 3},
            "2000 at 4.5%",
            {"rate_percent": 4.5},
        ),
        (
            IN_PERCENT,
            {"principal": 2000, "rate_percent": 0.05, "years": 3},
            "Zinsen 5 % auf 2000",
            {"rate_percent": 5},
        ),
        (IN_PERCENT, {"rate_percent": 4.5}, "2000 at 4.5%", {}),  # already right
        (IN_PERCENT, {"rate_percent": 0.045}, "2000 at 4.5", {}),  # no percent sign: not judged
        (
            IN_PERCENT,
            {"principal": 20, "rate_percent": 4.5},
            "20% off, 4.5% tax",
            {},
        ),  # principal takes no percent
        (AS_DECIMAL, {"rate": 4.5}, "à 4,5 % par an", {"rate": 0.045}),
        (AS_DECIMAL, {"rate": 0.045}, "à 4,5 % par an", {}),
        (AS_DECIMAL, {"rate": 0.5}, "0.5% a year", {}),  # at or under 1: could be either
        (PLAIN, {"rate": 0.045}, "at 4.5%", {}),  # the schema does not say: left as written
        (MENTIONS, {"amount": 0.2}, "Send 0.2 BTC and tip 20%", {}),
        (MENTIONS, {"ratio": 20}, "compress at 20% of the size", {}),
    ],
)
def test_rescaled_percents(schema: dict, args: dict, request_: str, fixed: dict) -> None:  # type: ignore[type-arg]
    assert rescaled_percents(schema, args, request_) == fixed


@tool
def compound_interest(principal: float, rate_percent: float, years: int) -> str:
    """Final amount of a deposit with compound interest.

    Args:
        principal: The amount deposited.
        rate_percent: Yearly interest rate in percent (5 for 5 %).
        years: How many years.
    """
    return f"{principal * (1 + rate_percent / 100) ** years:.2f}"


def test_the_policy_fixes_the_call_and_says_so() -> None:
    steps = [call("compound_interest", principal=2000, rate_percent=0.045, years=3), "2282.33"]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    result = Agent(engine=engine, tools=[compound_interest]).run(
        "Quanto rende 2000 a 4,5 % ao ano em 3 anos?"
    )
    assert [c.arguments["rate_percent"] for c in result.tool_calls] == [4.5]
    assert result.tool_calls[0].result == "2282.33"
    said = [e for e in result.events if isinstance(e, Notice) and e.code == Code.PERCENT_SCALE]
    assert said and "0.045 → 4.5" in said[0].message
