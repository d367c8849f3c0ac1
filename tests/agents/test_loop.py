"""The agent loop on a scripted engine: deterministic, no model needed."""

import json
from pathlib import Path

import pytest

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.errors import EngineError
from lar.types import (
    ErrorEvent,
    Final,
    Message,
    Notice,
    TextDelta,
    ToolCallFinished,
    event_from_json,
    event_to_json,
)

calls: list[tuple[int, int]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    calls.append((a, b))
    return a + b


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@pytest.fixture(autouse=True)
def _reset() -> None:
    calls.clear()


def agent(steps: list[object], **kw: object) -> tuple[Agent, ScriptedEngine]:
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    kw.setdefault("tools", [add, lookup])
    return Agent(engine=engine, workspace=Path("."), **kw), engine  # type: ignore[arg-type]


def call(name: str, **args: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def last_user(engine: ScriptedEngine, index: int) -> str:
    return [m for m in engine.calls[index] if m.role == "user"][-1].content


def test_plain_answer() -> None:
    a, engine = agent(["Paris."])
    result = a.run("Capital of France?")
    assert result.text == "Paris." and result.tool_calls == [] and result.turns == 1
    engine.assert_complete()


def test_tool_call_then_answer() -> None:
    a, engine = agent([call("add", a=1234, b=4321), "The sum is 5555."])
    result = a.run("What is 1234 + 4321?")
    assert result.text == "The sum is 5555."
    assert [(c.name, c.arguments, c.result) for c in result.tool_calls] == [
        ("add", {"a": 1234, "b": 4321}, 5555)
    ]
    # protocol track: the result is folded into the user turn, marked as data
    assert "<tool_result>\nadd(a=1234, b=4321) returned:\n5555\n</tool_result>" in last_user(
        engine, 1
    )
    engine.assert_complete()


def test_unknown_tool_goes_back_to_the_model() -> None:
    a, engine = agent([call("multiply", a=2, b=3), call("add", a=2, b=3), "5"])
    result = a.run("2+3?")
    assert result.text == "5"
    assert [c.name for c in result.tool_calls] == ["add"]  # the unknown call never ran
    feedback = last_user(engine, 1)
    assert "no tool named 'multiply'" in feedback and "available tools: add, lookup" in feedback


def test_malformed_arguments_go_back_as_a_validation_error() -> None:
    a, engine = agent([call("add", a="two", b=3), call("add", a=2, b=3), "5"])
    result = a.run("2+3?")
    assert result.text == "5" and calls == [(2, 3)]
    feedback = last_user(engine, 1)
    assert "invalid arguments" in feedback and "Expected: add(a: int, b: int)" in feedback


def test_broken_json_is_repaired_and_reported() -> None:
    a, _ = agent(["<tool_call>{'name': 'add', 'arguments': {'a': 1, 'b': 2,}}</tool_call>", "3"])
    result = a.run("1+2?")
    assert calls == [(1, 2)] and result.text == "3"
    assert any(isinstance(e, Notice) and e.code == "repaired" for e in result.events)


def test_model_that_never_stops_calling_tools_hits_max_turns() -> None:
    counter = iter(range(1000))
    a, engine = agent([lambda msgs: call("lookup", key=f"k{next(counter)}")], max_turns=4)
    engine.repeat_last = True
    result = a.run("loop forever")
    assert result.stop_reason == "max_turns" and result.turns == 4
    assert result.text.startswith("I stopped after 4 turns (max_turns)")
    assert len(result.tool_calls) == 3  # the 4th turn's call is refused, not run
    assert "last turn" not in engine.calls[0][0].content
    # the final turn withholds the tool listing and asks for an answer
    assert "# Tools" not in engine.calls[3][0].content


def test_after_a_successful_call_the_model_is_asked_for_the_answer() -> None:
    a, engine = agent([call("add", a=1, b=2), "It is 3."])
    result = a.run("1+2?")
    assert result.text == "It is 3." and calls == [(1, 2)]
    assert "# Tools" in engine.calls[0][0].content
    assert "# Tools" not in engine.calls[1][0].content  # listing withheld: answer from the data
    assert last_user(engine, 1).endswith("state the answer.")


def test_repeating_a_failed_call_switches_to_answer_mode() -> None:
    bad = call("add", a="x", b=2)
    a, engine = agent([bad, bad, "I cannot add 'x'."])
    result = a.run("x+2?")
    assert result.text == "I cannot add 'x'." and calls == []
    assert "# Tools" in engine.calls[1][0].content  # after a failure the tools stay listed
    assert "# Tools" not in engine.calls[2][0].content
    assert any(isinstance(e, Notice) and e.code == "repeated_call" for e in result.events)


def test_repeating_even_in_answer_mode_ends_with_the_known_result() -> None:
    a, _ = agent([call("add", a=1, b=2)] * 3)
    result = a.run("1+2?")
    assert result.stop_reason == "loop"
    assert result.text == "add(a=1, b=2) returned: 3"
    assert calls == [(1, 2)]


def test_ping_pong_never_reruns_a_call() -> None:
    steps = [call("lookup", key="a"), call("lookup", key="b")] * 2 + ["done"]
    a, _ = agent(steps, max_turns=8)
    result = a.run("ping pong")
    assert [c.arguments for c in result.tool_calls] == [{"key": "a"}, {"key": "b"}]
    assert result.stop_reason == "loop"
    assert result.text == 'lookup(key="a") returned: value of a'


def test_failed_call_skips_the_rest_of_the_turn() -> None:
    both = call("add", a="x", b=1) + "\n" + call("add", a=1, b=1)
    a, _ = agent([both, "ok"])
    result = a.run("two calls")
    finished = [e.result for e in result.events if isinstance(e, ToolCallFinished)]
    assert [r.error.code if r.error else "ok" for r in finished] == ["invalid_arguments", "skipped"]
    assert calls == []


def test_native_track_sends_schemas_and_tool_messages() -> None:
    from lar.types import ModelResponse, ToolCall

    native = ModelResponse(tool_calls=[ToolCall("c9", "add", {"a": 1, "b": 1})])
    a, engine = agent([native, "2"], track="native")
    assert a.run("1+1?").text == "2"
    assert engine.tools_seen[0] == ["add", "lookup"]
    second = engine.calls[1]
    assert second[-2].role == "assistant" and second[-2].tool_calls[0].id == "c9"
    assert (
        second[-1].role == "tool" and second[-1].tool_call_id == "c9" and second[-1].content == "2"
    )


def test_engine_failure_is_an_error_event_and_raises_in_run() -> None:
    a, _ = agent([EngineError("remote", "cannot reach http://127.0.0.1:9/v1", retryable=True)])
    events = list(a.stream("hi"))
    assert isinstance(events[-2], ErrorEvent) and "cannot reach" in events[-2].message
    assert isinstance(events[-1], Final) and events[-1].stop_reason == "error"
    a2, _ = agent([EngineError("remote", "down")])
    with pytest.raises(EngineError, match="down"):
        a2.run("hi")


def test_streaming_hides_call_markup_but_shows_prose() -> None:
    a, _ = agent([call("add", a=1, b=2), "The answer is 3."])
    events = list(a.stream("1+2?"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "The answer is 3."
    assert all(event_from_json(event_to_json(e)) == e for e in events)


def test_history_carries_over_between_runs() -> None:
    a, engine = agent(["Hello Ana.", "Your name is Ana."])
    history: list[Message] = []
    a.run("I am Ana.", history=history)
    a.run("What is my name?", history=history)
    assert [m.role for m in engine.calls[1][1:]] == ["user", "assistant", "user"]


def test_allowlist_from_the_agent() -> None:
    a, engine = agent([call("lookup", key="x"), "no"], allowlist=["add"])
    result = a.run("look")
    assert "lookup" not in engine.calls[0][0].content.split("# Tools")[1]
    assert result.tool_calls == []
