"""The policies for everyday requests: a figure worked out in the model's head goes to the
calculator, a named file is read before it is answered about, an answer that only copies Lar's
instructions is asked for again, and "and" asks only for more calls of the same tools."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fakes import calculate, call, read_numbers

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.types import Code, Message, Notice


@tool
def file_read(path: str) -> str:
    """Read a file.

    Args:
        path: The file.
    """
    return "# Tidy\nTidy sorts your downloads."


def run(
    steps: list[object], request: str, workspace: Path = Path(".")
) -> tuple[object, ScriptedEngine]:
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[read_numbers, calculate, file_read], workspace=workspace)
    return agent.run(request), engine


def codes(result: object) -> list[str]:
    return [e.code for e in result.events if isinstance(e, Notice)]  # type: ignore[attr-defined]


def test_a_figure_no_tool_gave_is_sent_to_the_calculator_once() -> None:
    steps = [
        call("read_numbers", which="A"),
        "52.5",
        call("calculate", expression="12.5 + 7.25 + 30 + 0.75"),
        "The sum is 50.5.",
    ]
    result, engine = run(steps, "Sum the numbers of list A")
    assert result.text == "The sum is 50.5."  # type: ignore[attr-defined]
    assert Code.UNCHECKED_FIGURE in codes(result)
    assert '"name": "calculate"' in engine.calls[2][-1].content  # the nudge shows the call


def test_a_figure_from_the_data_is_not_questioned() -> None:
    result, engine = run([call("read_numbers", which="A"), "The largest is 30."], "Largest of A?")
    assert result.text == "The largest is 30." and len(engine.calls) == 2  # type: ignore[attr-defined]


def test_a_request_naming_a_workspace_file_is_not_answered_unread(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Tidy\n")
    steps = ["- It is a project.", call("file_read", path="README.md"), "- Tidy sorts downloads."]
    result, engine = run(steps, "Summarize README.md in three bullets.", tmp_path)
    assert result.text == "- Tidy sorts downloads."  # type: ignore[attr-defined]
    assert Code.UNREAD_FILE in codes(result)
    assert "README.md is in the workspace" in engine.calls[1][-1].content


def test_a_file_that_is_not_there_is_not_pressed_on(tmp_path: Path) -> None:
    result, engine = run(["It is not here."], "Summarize NOTES.md please.", tmp_path)
    assert result.text == "It is not here." and len(engine.calls) == 1  # type: ignore[attr-defined]


def test_an_answer_that_only_copies_a_correction_is_asked_for_again() -> None:
    # a rule of the protocol track's system prompt
    copied = (
        "Never work out a tool's result yourself (sums, conversions, file contents): call the tool."
    )
    steps = [call("read_numbers", which="A"), copied, "A holds 12.5, 7.25, 30 and 0.75."]
    result, engine = run(steps, "What is in list A?")
    assert result.text == "A holds 12.5, 7.25, 30 and 0.75."  # type: ignore[attr-defined]
    assert Code.LEAKED_TEXT in codes(result)
    assert "# Tools" not in engine.calls[2][0].content  # asked without tools


def test_and_asks_for_more_calls_of_the_same_tool_only() -> None:
    steps = [
        call("read_numbers", which="A"),
        call("read_numbers", which="A") + "\n" + call("calculate", expression="1 + 1"),
        "A holds four numbers.",
    ]
    result, _ = run(steps, "Read list A and tell me the sum")
    ran = [c.name for c in result.tool_calls]  # type: ignore[attr-defined]
    assert ran == ["read_numbers"]  # a calculate with made-up numbers is not added


def test_an_empty_answer_after_tool_data_shows_the_data() -> None:
    result, _ = run([call("read_numbers", which="A"), "   "], "What is in list A?")
    assert result.text.startswith("Here is what read_numbers found:\n12.5")  # type: ignore[attr-defined]


@tool(name="calculate")
def picky_calculate(expression: str) -> str:
    """Work out arithmetic.

    Args:
        expression: The arithmetic.
    """
    if any(ch.isalpha() for ch in expression):
        raise ValueError(f"cannot work out {expression!r}")
    return f"{expression} = 50.5"


def test_a_calculator_call_that_failed_does_not_vouch_for_a_figure() -> None:
    steps = [
        call("read_numbers", which="A"),
        call("calculate", expression="sum(A)"),
        "52.5",
        call("calculate", expression="12.5 + 7.25 + 30 + 0.75"),
        "The sum is 50.5.",
    ]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[read_numbers, picky_calculate])
    result = agent.run("Sum the numbers of list A")
    assert result.text == "The sum is 50.5."
    assert Code.UNCHECKED_FIGURE in codes(result)
    engine.assert_complete()


def test_a_calculator_call_naming_the_file_reads_its_numbers(tmp_path: Path) -> None:
    """The built-in calculator reads a named workspace file's numbers itself, so its call
    touches the file: no figure is copied by hand, and no detour through file_read."""
    from lar.tools.builtin import builtin_tools

    (tmp_path / "numbers.txt").write_text("12.5\n7.25\n30\n0.75\n")
    total = call("calculate", expression="sum(numbers.txt)")
    engine = ScriptedEngine([total, total, "It is 50.5."])  # the second: "and" asks for more
    agent = Agent(engine=engine, tools=builtin_tools(), workspace=tmp_path)
    result = agent.run("Read numbers.txt and tell me the sum.")
    assert result.text == "It is 50.5."
    assert Code.UNREAD_FILE not in codes(result)
    assert "= 50.5 (numbers.txt: 12.5, 7.25, 30, 0.75)" in engine.calls[2][-1].content
    engine.assert_complete()


def test_assumed_factors_are_precise_decimals_nobody_gave() -> None:
    from lar.agents.answer_policies import assumed_factors

    said = "What is 17% of 2,340? A 20% tip on 64.50. 35% off 120, plus 7.5% tax."
    for given in ("0.17 * 2340", "2340*17/100", "64.50*0.2", "120*0.65*1.075", "3*7*24"):
        assert assumed_factors(given, said) == [], given
    assert assumed_factors("(350 - 32) * 5/9 + 0.5", said) == []  # round: common knowledge
    assert assumed_factors("80 * 11.374", said) == ["11.374"]
    assert assumed_factors("50 * 1.0873", "Quantos dólares são 50 euros?") == ["1.0873"]
    # The factor between two common units, as precisely as it is known, is no made-up figure.
    assert assumed_factors("70 * 2.20462 + 26.2 * 1.60934", "70 kg; 26.2 miles") == []
    # The numbers the model supplied must convert the units the request names.
    cups, weeks, yards = (
        "How many millilitres are 5 cups?", "How many hours are in 4 weeks?",
        "How many yards are 30 metres?",
    )  # fmt: skip
    assert assumed_factors("5 * 100", cups, cups) == ["100"]
    assert assumed_factors("5 * 236.588", cups, cups) == []
    assert assumed_factors("4 * 7 * 24", weeks, weeks) == []
    assert assumed_factors("30 * 1.60934", yards, yards) == ["1.60934"]


@tool(read_only=True)
def calc(expression: str) -> str:
    """Work out arithmetic.

    Args:
        expression: The arithmetic.
    """
    return f"{expression} = 909.92"


def test_a_rate_nobody_gave_is_asked_about_once_and_a_repeat_runs() -> None:
    def go(steps: list[str]) -> tuple[object, ScriptedEngine]:
        engine = ScriptedEngine(steps)  # type: ignore[arg-type]
        return Agent(engine=engine, tools=[calc]).run(
            "What are 80 Swiss francs in Swedish krona?"
        ), engine

    rate = call("calc", expression="80 * 1.1374")
    result, engine = go([rate, "I cannot know today's rate here."])
    assert result.text == "I cannot know today's rate here."  # type: ignore[attr-defined]
    assert Code.ASSUMED_FACTOR in codes(result)
    assert "1.1374 is in neither my request nor any tool result" in engine.calls[1][-1].content

    result, engine = go([rate, rate, "It is 909.92 krona."])
    assert codes(result).count(Code.ASSUMED_FACTOR) == 1
    assert result.text == "It is 909.92 krona."  # type: ignore[attr-defined]  # asked once


@tool(read_only=True)
def web_scan(url: str) -> str:
    """Fetch a web page as text.

    Args:
        url: An http or https URL.
    """
    return "City Museum. Open Tuesday to Sunday, 10:00 to 17:00."


def test_a_request_naming_a_page_is_not_answered_unfetched() -> None:
    page = "http://127.0.0.1:8000/museum.html"
    steps = ["I cannot access web pages.", call("web_scan", url=page), "It opens at 10:00."]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    result = Agent(engine=engine, tools=[web_scan]).run(f"When does the museum on {page} open?")
    assert result.text == "It opens at 10:00."
    assert Code.UNREAD_FILE in codes(result)
    assert "call web_scan on it first" in engine.calls[1][-1].content


def _answer_turn(request: str, answer: str, recalled: list[str]) -> object:
    from lar.agents.policy import RunState, Turn
    from lar.types import Message

    run_state = RunState("r", 4)
    run_state.turn = 1
    return Turn(
        run_state, "protocol", {}, [Message("user", request)], text=answer, recalled=recalled
    )


@pytest.mark.parametrize(
    ("request_text", "answer", "asks"),
    [
        ("What do I put in my tea?", "Boil water, steep the tea for three minutes.", True),
        ("What do I put in my tea?", "You take your tea with honey and lemon.", False),
        ("What is the capital of Peru?", "Lima.", False),  # the memory shares no word
        ("What should I cook with rice?", "A risotto.", False),  # only a word Lar's prompt uses
    ],
)
def test_an_answer_that_ignores_a_recalled_memory_is_asked_about_once(
    request_text: str, answer: str, asks: bool
) -> None:
    import asyncio

    from lar.agents.answer_policies import IgnoredMemory
    from lar.agents.policy import Retry

    memory = ["- I take my tea with honey and lemon. (2026-11-30)"]
    turn = _answer_turn(request_text, answer, memory)
    shown = "What the user told you earlier:\n" + memory[0]
    turn.memory = shown  # type: ignore[attr-defined]
    prompt = f"Answer briefly. Use a tool with its arguments.\n\n{shown}"
    turn.request = [Message("system", prompt)]  # type: ignore[attr-defined]
    verdict = asyncio.run(IgnoredMemory().before_answer(turn))  # type: ignore[arg-type]
    assert isinstance(verdict, Retry) is asks
    if asks:
        assert "Earlier I told you: I take my tea with honey and lemon." in verdict.nudge  # type: ignore[union-attr]


@tool
def circle_area(radius: float) -> str:
    """The area of a circle.

    Args:
        radius: The radius.
    """
    return f"{3.141592653589793 * radius * radius:.2f}"


@tool(broad=True)
def general(expression: str, scale: float = 1.0) -> str:
    """A broad tool (as Lar's own are) that takes a number.

    Args:
        expression: Anything.
        scale: A number.
    """
    return expression


def run_with(tools: list[object], steps: list[object], request: str) -> tuple[object, object]:
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=tools)  # type: ignore[arg-type]
    return agent.run(request), engine


PROSE = "Using A = pi r^2 with r = 39.3, the area is about 4852.03 square metres."


def test_a_figure_worked_out_in_prose_beside_a_fitting_narrow_tool_asks_for_its_call() -> None:
    steps = [PROSE, call("circle_area", radius=39.3), "The area is 4852.03 m²."]
    result, engine = run_with([circle_area], steps, "Área de um círculo de raio 39.3 m?")
    assert [c.name for c in result.tool_calls] == ["circle_area"]  # type: ignore[attr-defined]
    assert Code.UNCHECKED_FIGURE in codes(result)
    nudge = engine.calls[1][-1].content  # type: ignore[attr-defined]
    assert "4852.03" in nudge and "circle_area" in nudge
    engine.assert_complete()  # type: ignore[attr-defined]


def test_it_asks_only_once_and_the_second_prose_answer_stands() -> None:
    steps = [PROSE, "The area is about 4852.03 square metres."]
    result, engine = run_with([circle_area], steps, "Area of a circle of radius 39.3 m?")
    assert result.text == "The area is about 4852.03 square metres."  # type: ignore[attr-defined]
    assert codes(result).count(Code.UNCHECKED_FIGURE) == 1
    engine.assert_complete()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("tools", "request_text", "answer"),
    [
        ("narrow", "What is a circle's area formula?", "A = pi r^2; for r = 10 it is 314.16."),
        ("narrow", "Area of a circle of radius 39.3 m?", "I need the unit: is 39.3 in metres?"),
        ("broad", "Area of a circle of radius 39.3 m?", PROSE),
        ("none", "Area of a circle of radius 39.3 m?", PROSE),
    ],
    ids=["no-number-in-request", "only-the-requests-figures", "only-broad-tools", "no-tools"],
)
def test_no_call_is_asked_for_without_a_narrow_numeric_tool_and_a_worked_out_figure(
    tools: str, request_text: str, answer: str
) -> None:
    offered = {"narrow": [circle_area], "broad": [general], "none": []}[tools]
    result, engine = run_with(offered, [answer], request_text)
    assert result.text == answer  # type: ignore[attr-defined]
    assert len(engine.calls) == 1  # type: ignore[attr-defined]


def test_a_list_of_numbers_counts_as_taking_numbers_and_text_does_not() -> None:
    from lar.agents.answer_policies import takes_numbers
    from lar.tools.base import SchemaTool

    def schema(props: dict[str, object]) -> SchemaTool:
        return SchemaTool("t", "d", {"type": "object", "properties": props}, lambda **_: "")

    assert takes_numbers(schema({"xs": {"type": "array", "items": {"type": "integer"}}}))
    assert takes_numbers(schema({"x": {"type": ["number", "null"]}}))
    assert not takes_numbers(schema({"country": {"type": "string"}}))
    assert takes_numbers(circle_area) and takes_numbers(general)
