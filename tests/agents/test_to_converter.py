"""to_converter: a conversion the request asks for between two units pint reads, worked out by
the model with factors of its own, is run by the converter on the request's amount and units;
anything else is left alone."""

from __future__ import annotations

import random
from pathlib import Path

import pint
import pytest

from lar.agents.agent import Agent
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin.calc import amount_of, asked_conversion, calculate, convert_units
from lar.types import Notice

PAIRS = [("miles", "kilometers"), ("pounds", "kilograms"), ("kg", "lb"), ("km", "miles"),
         ("degrees Fahrenheit", "degrees Celsius"), ("Celsius", "Fahrenheit")]  # fmt: skip
TEMPLATES = ["Convert {v} {a} to {b}.", "How many {b} is {v} {a}?",
             "{v} {a}, ça fait combien en {b} ?", "Converta {v} {a} para {b}."]  # fmt: skip


def test_the_amount_and_both_units_are_read_from_the_request() -> None:
    rng = random.Random(21)
    ureg = pint.UnitRegistry()
    for _ in range(40):
        a, b = rng.choice(PAIRS)
        value = rng.randint(15, 5000) / 10
        written = f"{value:g}".replace(".", ",") if rng.random() < 0.5 else f"{value:g}"
        request = rng.choice(TEMPLATES).format(v=written, a=a, b=b)
        asked = asked_conversion(request)
        assert asked is not None, request
        amount, source, target = asked
        assert amount == value
        assert ureg.parse_units(source) == ureg.parse_units(a.split()[-1].lower())
        assert ureg.parse_units(target) == ureg.parse_units(b.split()[-1].lower())


@pytest.mark.parametrize(
    "request_",
    [
        "I ran 5 km in 30 minutes, what was my pace?",  # two kinds of unit
        "Quanto é 279,2 milhas em quilômetros?",  # units pint cannot read
        "How far is 3 km plus 2 miles plus 400 yards?",  # three units
        "Add 12 and 7.",
    ],  # fmt: skip
)
def test_nothing_is_read_where_no_single_conversion_is_asked(request_: str) -> None:
    assert asked_conversion(request_) is None


def test_figures_are_read_as_written() -> None:
    assert amount_of("5,000") == 5000 and amount_of("279,2") == 279.2
    assert amount_of("1.250.000") == 1_250_000 and amount_of("2.340,5") == 2340.5
    assert amount_of("12.75") == 12.75


def run(reply: str, request: str, tmp_path: Path) -> tuple[str, list[str], list[Notice]]:
    engine = ScriptedEngine([reply, "Done."], repeat_last=True)
    tools = [calculate, convert_units]
    result = Agent(engine=engine, tools=tools, workspace=tmp_path, traces=False).run(request)
    said = [m.content for m in engine.calls[-1] if m.role in ("user", "tool")]
    notices = [e for e in result.events if isinstance(e, Notice)]
    return "\n".join(said), [n.code for n in notices], notices


def test_a_conversion_by_hand_runs_in_the_converter(tmp_path: Path) -> None:
    by_hand = (
        '<tool_call>{"name": "calculate", "arguments": {"expression": "109 * (5/9)"}}</tool_call>'
    )
    said, codes, _ = run(by_hand, "Convert 109 degrees Fahrenheit to degrees Celsius.", tmp_path)
    assert "to_converter" in codes
    assert "= 42.7777" in said and "60.555" not in said  # (109 - 32) * 5 / 9, not 109 * 5 / 9
    wrong_value = ('<tool_call>{"name": "convert_units", "arguments": {"value": 279200, '
                   '"from_unit": "mile", "to_unit": "km"}}</tool_call>')  # fmt: skip
    said, codes, _ = run(wrong_value, "What is 279,2 miles in km?", tmp_path)
    assert "to_converter" in codes and "449.3" in said


@pytest.mark.parametrize(
    ("expression", "request_"),
    [
        (
            "(109 - 32) * 5 / 9 + 3",
            "Convert 109 degrees Fahrenheit to Celsius, then add 3 degrees.",
        ),
        ("12 * 0.621371 / 4", "Convert 12 km to miles and divide that by 4."),
    ],  # fmt: skip
)
def test_a_calculation_using_another_figure_of_the_request_is_left_alone(
    expression: str, request_: str, tmp_path: Path
) -> None:
    arguments = f'{{"expression": "{expression}"}}'
    reply = f'<tool_call>{{"name": "calculate", "arguments": {arguments}}}</tool_call>'
    assert asked_conversion(request_) is not None  # a conversion is asked, and more
    _, codes, _ = run(reply, request_, tmp_path)
    assert "to_converter" not in codes


def test_a_converter_amount_that_misreads_the_requests_figure_gets_the_figure(
    tmp_path: Path,
) -> None:
    def call(value: object) -> str:
        arguments = f'{{"value": {value}, "from_unit": "mile", "to_unit": "km"}}'
        return f'<tool_call>{{"name": "convert_units", "arguments": {arguments}}}</tool_call>'

    # the units in words pint cannot read: the model named them, its amount lost the comma
    said, codes, _ = run(call(2478000), "Converta 247,8 milhas para quilômetros.", tmp_path)
    assert "to_converter" in codes and "= 398.7954" in said
    # an amount with other digits is the model's own (a figure worked out, a word read)
    _, codes, _ = run(call(26), "Quantos quilômetros são vinte e seis milhas, em 2024?", tmp_path)
    assert "to_converter" not in codes
