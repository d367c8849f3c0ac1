"""made_up_rate: a calculation with a figure nobody gave, for a request naming two currencies,
becomes the converter's call, whose account (no exchange rates here) ends the run; a rate the
user gave, or no second currency, lets the calculation run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _fakes import call

from lar import Agent
from lar.agents.value_policies import named_currencies
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin.calc import calculate, convert_units
from lar.types import Code, Notice, ToolCallFinished

CODES = ["EUR", "USD", "GBP", "JPY", "CHF", "BRL", "CNY", "MXN", "CAD"]
ASKED = {
    "en": "How many {q} do I get for one {b} today?",
    "pt": "Quantos {q} vale um {b} hoje?",
    "de": "Wie viele {q} bekomme ich heute für einen {b}?",
    "zh": "今天一{b}能换多少{q}？",
}


def run(tmp_path: Path, request: str, steps: list[str]) -> object:
    engine = ScriptedEngine(steps, repeat_last=True)  # type: ignore[arg-type]
    tools = [calculate, convert_units]
    return Agent(engine=engine, tools=tools, workspace=tmp_path).run(request)


def ran(result: object) -> list[str]:
    return [e.result.name for e in result.events if isinstance(e, ToolCallFinished)]  # type: ignore[attr-defined]


def codes(result: object) -> list[str]:
    return [e.code for e in result.events if isinstance(e, Notice)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("language", sorted(ASKED))
def test_a_rate_from_memory_ends_on_the_converters_account(tmp_path: Path, language: str) -> None:
    rng = random.Random(f"rate-{language}")
    for _ in range(4):
        base, quote = rng.sample(CODES, 2)
        rate = f"{rng.randint(1, 200)}.{rng.randint(10, 99)}"
        request = ASKED[language].format(b=base, q=quote)
        made_up = f"1 {base} is {rate} {quote}."
        result = run(tmp_path, request, [call("calculate", expression=f"1 * {rate}"), made_up])
        assert rate not in result.text  # type: ignore[attr-defined]
        assert "cannot convert currencies" in result.text  # type: ignore[attr-defined]
        assert ran(result) == ["convert_units"]
        assert Code.MADE_UP_RATE in codes(result)
        assert set(named_currencies(request)) == {base, quote}


def test_a_rate_the_user_gave_or_one_currency_runs_the_calculation(tmp_path: Path) -> None:
    given = "Convert 250 USD to EUR at 0.92 please."
    result = run(tmp_path, given, [call("calculate", expression="250 * 0.92"), "230 EUR."])
    assert ran(result) == ["calculate"]
    assert Code.MADE_UP_RATE not in codes(result)
    tip = "Split $99.38 among 4 people with a 12% tip."
    result = run(tmp_path, tip, [call("calculate", expression="99.38 * 1.12 / 4"), "$27.83"])
    assert ran(result) == ["calculate"]
    assert Code.MADE_UP_RATE not in codes(result)
    # "won" is a verb as often as a currency
    won = "I won 500 dollars; what is 20% of it?"
    result = run(tmp_path, won, [call("calculate", expression="500 * 20 / 100"), "100 dollars."])
    assert ran(result) == ["calculate"]
    assert Code.MADE_UP_RATE not in codes(result)


def test_a_page_fetched_for_a_rate_runs_as_written(tmp_path: Path) -> None:
    from lar.tools.base import tool

    @tool(read_only=True, reads_outside=True)
    def fetch(url: str) -> str:
        """Fetch a page."""
        return "1 USD = 151.20 JPY"

    steps = [call("fetch", url="https://rates.example/usd?amount=100&v=2024"), "151.20 JPY."]
    engine = ScriptedEngine(steps, repeat_last=True)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[fetch, calculate, convert_units], workspace=tmp_path)
    result = agent.run("How many JPY do I get for one USD today?")
    assert ran(result) == ["fetch"]
    assert Code.MADE_UP_RATE not in codes(result)
