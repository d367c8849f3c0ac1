"""A figure the request writes with points between thousands (9.385 in German) passed to a
harmless tool as a decimal is given the number the request means (grouped_figures); nothing
changes where the request's way of writing numbers does not group with a point, or for a tool
that writes."""

from __future__ import annotations

import json
import random

from lar import Agent, tool
from lar.calling.grouping import grouped_figures, ungrouped
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin import calculate
from lar.types import Code, Notice


def call(name: str, **args: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def dotted(n: int) -> str:
    return f"{n:,}".replace(",", ".")


def test_figures_grouped_with_points_are_read_as_the_request_writes_them() -> None:
    rng = random.Random(11)
    for _ in range(50):
        n = rng.randint(1000, 9_999_999)
        assert grouped_figures(f"Was ergeben 95 % von {dotted(n)}?") == {dotted(n): n}
        assert grouped_figures(f"Quanto dá 32% de {dotted(n)}?") == {dotted(n): n}
        # a decimal comma says how the request writes numbers, whatever its language
        assert grouped_figures(f"19,5 % de {dotted(n)}") == {dotted(n): n}
    assert grouped_figures("Quanto é 2.340,5 mais 1.000?") == {
        "2.340,5": 2340.5,
        "1.000": 1000.0,
    }


def test_nothing_is_read_so_where_points_are_decimal_marks() -> None:
    assert grouped_figures("What is 95% of 9.385?") == {}
    assert grouped_figures("How much is 95 percent of 9.385?") == {}
    assert grouped_figures("Combien font 12 % de 9.385 ?") == {}  # French groups with spaces
    # not a group of three, a version, a leading zero, a date
    for text in ("4.5 kg", "version 1.2.3", "0.125 l", "am 12.03.2024", "3.14159"):
        assert grouped_figures(text, groups=True) == {}, text


def test_a_call_passing_the_figure_as_a_decimal_gets_the_number() -> None:
    figures = {"9.385": 9385.0, "2.340,5": 2340.5}
    assert ungrouped({"value": 9.385, "unit": "kg"}, figures) == {"value": 9385}
    assert ungrouped({"expression": "95% of 9.385"}, figures) == {"expression": "95% of 9385"}
    assert ungrouped({"expression": "2.340,5 + 1"}, figures) == {"expression": "2340.5 + 1"}
    assert ungrouped({"expression": "19.385 + 9.3851", "n": 9.386, "b": True}, figures) == {}


@tool(permission="confirm")
def file_write(path: str, content: str) -> str:
    """Write a file.

    Args:
        path: The file.
        content: Its text.
    """
    return "written"


def test_the_policy_changes_the_calculation_and_says_so() -> None:
    steps = [call("calculate", expression="95% of 9.385"), "8915,75"]
    result = Agent(engine=ScriptedEngine(steps), tools=[calculate]).run(  # type: ignore[arg-type]
        "Was ergeben 95 % von 9.385?"
    )
    (ran,) = result.tool_calls
    assert ran.arguments["expression"] == "95% of 9385"
    assert ran.result == "95% of 9385 = 8915.75"
    said = [e for e in result.events if isinstance(e, Notice) and e.code == Code.GROUPED_FIGURES]
    assert said and "'95% of 9.385' → '95% of 9385'" in said[0].message


def test_text_a_tool_writes_is_left_as_the_model_gave_it() -> None:
    steps = [call("file_write", path="total.txt", content="Summe: 9.385"), "ok"]
    result = Agent(  # type: ignore[arg-type]
        engine=ScriptedEngine(steps), tools=[file_write], approver=lambda c, t: True
    ).run("Schreib 'Summe: 9.385' in total.txt")
    assert [c.arguments["content"] for c in result.tool_calls] == ["Summe: 9.385"]
