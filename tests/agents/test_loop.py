"""The agent loop on a scripted engine: deterministic, no model needed."""

import json
import re
from pathlib import Path

import pytest

from lar import Agent, tool
from lar.calling.corrections import DESCRIBED_NUDGE, MORE_CALLS_NUDGE
from lar.calling.prompt import ANSWER_MODE_NOTE, NO_TOOL_NOTE
from lar.engines.scripted import ScriptedEngine
from lar.errors import EngineError
from lar.tools.base import held_back
from lar.types import (
    ErrorEvent,
    Final,
    Message,
    ModelCalled,
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
    assert "no tool named multiply" in feedback and "the only tools are: add, lookup" in feedback


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


def test_after_a_result_the_tools_stay_listed_for_a_next_step() -> None:
    first = call("lookup", key="x")
    # "and" in the request: asked once for more calls, the model repeats its call (added: none)
    a, engine = agent([first, first, call("add", a=1, b=2), "It is 3."])
    result = a.run("look x up, then add 1 and 2")
    assert result.text == "It is 3." and calls == [(1, 2)]
    assert [c.name for c in result.tool_calls] == ["lookup", "add"]
    assert "# Tools" in engine.calls[2][0].content  # still listed: a second call is possible
    assert "<tool_result>" in last_user(engine, 2)
    assert last_user(engine, 2).endswith("call the next tool if it needs another step.")


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 18 degrees"


def test_a_request_naming_several_items_is_asked_once_for_the_remaining_calls() -> None:
    steps = [call("get_weather", city="Braga"), call("get_weather", city="Evora"), "Both mild."]
    a, engine = agent(steps, tools=[get_weather])
    result = a.run("Weather in Braga and in Evora?")
    assert [c.arguments for c in result.tool_calls] == [{"city": "Braga"}, {"city": "Evora"}]
    asked = engine.calls[1]
    assert asked[-2].role == "assistant" and "Braga" in asked[-2].content  # its own first call
    assert asked[-1].content == MORE_CALLS_NUDGE
    assert "Evora: 18 degrees" in last_user(engine, 2)  # both results come back together
    notices = {e.code: e.message for e in result.events if isinstance(e, Notice)}
    assert notices["more_calls"].endswith('get_weather(city="Evora")')
    models = [e for e in result.events if isinstance(e, ModelCalled)]
    assert len(models) == 3 and result.usage.total_tokens == sum(
        m.usage.total_tokens for m in models
    )


def test_made_up_or_repeated_extra_calls_are_not_added() -> None:
    more = "\n".join(
        call("get_weather", city=c)
        for c in ("London", "Paris", "Tokyo")  # Tokyo: made up
    )
    a, _ = agent([call("get_weather", city="London"), more, "ok"], tools=[get_weather])
    result = a.run("Weather in London and Paris?")
    assert [c.arguments["city"] for c in result.tool_calls] == ["London", "Paris"]


def test_a_single_item_request_costs_no_extra_generation() -> None:
    a, engine = agent([call("get_weather", city="Porto"), "Mild."], tools=[get_weather])
    a.run("Weather in Porto?")
    engine.assert_complete()
    assert len(engine.calls) == 2


def test_a_model_that_repeats_a_call_is_stopped_by_the_loop_guard() -> None:
    a, engine = agent([call("add", a=1, b=2)] * 8, max_turns=6)
    result = a.run("1+2?")
    assert calls == [(1, 2)] * 3  # the guard runs a call at most three times
    blocked = [e for e in result.events if isinstance(e, Notice) and e.code == "loop_blocked"]
    assert blocked and "already ran 3 times" in blocked[0].message
    assert result.stop_reason == "max_turns" and len(engine.calls) == 6


def test_ping_pong_is_blocked_by_the_loop_guard() -> None:
    steps = [call("lookup", key="a"), call("lookup", key="b")] * 2 + ["done"]
    a, _ = agent(steps, max_turns=8)
    result = a.run("ping pong")
    ran = [e.result for e in result.events if isinstance(e, ToolCallFinished)]
    assert [r.error.code if r.error else "ok" for r in ran] == ["ok", "ok", "ok", "loop_blocked"]
    assert "alternating" in ran[-1].content
    assert result.text == "done"


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


# --- protocol-track corrections (T2, T3): reply, invented tools, described calls, echoes ------


def test_reply_with_a_bare_string_is_the_answer_too() -> None:
    text = '{"name": "reply", "arguments": "Please call the plumber."}'
    a, _ = agent([text])
    assert a.run("What now?").text == "Please call the plumber."


def test_reply_pseudo_tool_is_the_answer_and_runs_nothing() -> None:
    a, engine = agent([call("reply", text="Au is the symbol for gold.")])
    result = a.run("Chemical symbol for gold?")
    assert result.text == "Au is the symbol for gold." and result.tool_calls == []
    assert "reply(text: str): Answer me directly" in engine.calls[0][0].content


def test_reply_is_not_listed_when_a_real_tool_has_that_name() -> None:
    @tool
    def reply(text: str) -> str:
        """Send a reply to the last e-mail."""
        return "sent"

    a, engine = agent([call("reply", text="ok"), "Sent."], tools=[reply])
    result = a.run("Reply ok to the last e-mail")
    assert [c.name for c in result.tool_calls] == ["reply"]  # the real tool ran
    assert "Answer me directly" not in engine.calls[0][0].content


def test_an_invented_tool_is_never_run_and_the_model_is_asked_once() -> None:
    a, engine = agent([call("get_capital", country="France"), "Paris."])
    history: list[Message] = []
    result = a.run("Capital of France?", history=history)
    assert result.text == "Paris." and result.tool_calls == []
    notices = [e.code for e in result.events if isinstance(e, Notice)]
    assert "invented_tool" in notices
    nudge = last_user(engine, 1)
    assert nudge.startswith("Capital of France?\n\n")  # after the user's own words
    assert "There is no tool named get_capital; the only tools are: add, lookup" in nudge
    # the nudge is shown for that turn only, never stored
    assert [m.role for m in history] == ["user", "assistant"]
    assert all("There is no tool" not in m.content for m in history)


def test_a_tool_its_gate_left_unlisted_runs_when_called_by_name() -> None:
    @tool
    def erase(key: str) -> str:
        """Erase a key."""
        return f"erased {key}"

    erase.offered = held_back  # listed for no request
    a, engine = agent([call("erase", key="k"), "Erased k."], tools=[add, lookup, erase])
    result = a.run("Erase k.")
    assert "erase" not in engine.calls[0][0].content  # not in the listing
    assert [c.name for c in result.tool_calls] == ["erase"] and result.text == "Erased k."
    notices = [e.code for e in result.events if isinstance(e, Notice)]
    assert "unlisted_tool" in notices and "invented_tool" not in notices
    # written as a Python call, it is read as one too: the parser knows the held name
    a, _ = agent(['erase(key="k")', "Erased k."], tools=[add, lookup, erase])
    assert [c.name for c in a.run("Erase k.").tool_calls] == ["erase"]


def test_an_invented_tool_near_a_listed_one_names_it() -> None:
    a, engine = agent([call("lokup", key="k"), call("lookup", key="k"), "value of k"])
    result = a.run("look k up")
    assert [c.name for c in result.tool_calls] == ["lookup"]
    assert "If you meant lookup, call it" in last_user(engine, 1)


def test_inventing_again_after_the_nudge_asks_for_the_answer_without_tools() -> None:
    a, engine = agent([call("get_capital", country="France")] * 2 + ["Paris."])
    result = a.run("Capital of France?")
    assert result.tool_calls == [] and result.text == "Paris."
    system = engine.calls[2][0].content
    assert "# Tools" not in system  # answer mode: tools withheld
    # nothing was fetched: the model answers from what it knows, not from "that data"
    assert NO_TOOL_NOTE in system and ANSWER_MODE_NOTE not in system


def test_inventing_to_the_end_says_so_and_runs_nothing() -> None:
    a, _ = agent([call("get_capital", country="France")] * 4, max_turns=3)
    result = a.run("Capital of France?")
    assert result.tool_calls == [] and result.stop_reason == "answer"
    assert result.text == "I have no tool for that: get_capital is not one of my tools."


def test_a_described_call_gets_one_nudge() -> None:
    text = "To find it, I would use the `lookup` tool with the key x."
    a, engine = agent([text, call("lookup", key="x"), "It is value of x."])
    result = a.run("What is x?")
    assert [c.name for c in result.tool_calls] == ["lookup"]
    assert last_user(engine, 1) == "What is x?\n\n" + DESCRIBED_NUDGE
    assert any(isinstance(e, Notice) and e.code == "described_call" for e in result.events)


def test_the_same_call_twice_in_one_reply_runs_once() -> None:
    twice = call("add", a=1, b=2) + "\n" + call("add", a=1, b=2)
    a, _ = agent([twice, "3"])
    result = a.run("1+2?")
    assert calls == [(1, 2)] and len(result.tool_calls) == 1


def test_a_list_in_a_one_value_parameter_becomes_one_call_each() -> None:
    a, _ = agent([call("lookup", key=["a", "b"]), "done"])
    result = a.run("look up a and b")
    assert [c.arguments for c in result.tool_calls] == [{"key": "a"}, {"key": "b"}]
    assert any(isinstance(e, Notice) and e.code == "coerced" for e in result.events)


def test_model_calls_report_the_prompt_parts_when_fitted() -> None:
    from lar.types import ModelCalled

    a, _ = agent(["Paris."], n_ctx=4096)
    result = a.run("Capital of France?")
    parts = next(e for e in result.events if isinstance(e, ModelCalled)).prompt_parts
    assert parts["tools"] > 0 and parts["system"] > 0 and parts["history"] > 0


def test_reply_is_taken_in_answer_mode_too() -> None:
    # On the last turn the listing is withheld; a model that still "calls" reply answers.
    steps = [call("add", a=1, b=2), call("reply", text="It is 3.")]
    a, engine = agent(steps, max_turns=2)
    result = a.run("1+2?")
    assert result.text == "It is 3." and calls == [(1, 2)]
    system = engine.calls[1][0].content  # answer mode after a result: use that data
    assert ANSWER_MODE_NOTE in system and NO_TOOL_NOTE not in system


# --- off-topic calls (lar.calling.relevance, real embedder) ----------------------------------


@pytest.mark.off_topic
def test_a_first_call_to_an_unrelated_tool_is_not_run_and_tools_are_withheld() -> None:
    a, engine = agent([call("add", a=1, b=2), "Leonardo da Vinci."])
    history: list[Message] = []
    result = a.run("Who painted the Mona Lisa?", history=history)
    assert result.text == "Leonardo da Vinci." and result.tool_calls == [] and calls == []
    off = next(e for e in result.events if isinstance(e, Notice) and e.code == "off_topic_call")
    assert "(threshold 0.15; a, b not in the conversation)" in off.message
    assert off.policy == "off_topic"
    assert off.numbers["similarity.add"] == pytest.approx(0.05, abs=0.02)
    assert "# Tools" in engine.calls[0][0].content
    assert "# Tools" not in engine.calls[1][0].content  # answer mode
    assert NO_TOOL_NOTE in engine.calls[1][0].content  # nothing ran: no "use that data"
    assert [m.role for m in history] == ["user", "assistant"]  # the refused call is not kept


@pytest.mark.off_topic
def test_a_call_that_fits_the_request_runs() -> None:
    a, _ = agent([call("add", a=2, b=3), "5"])
    result = a.run("What is 2 plus 3?")
    assert result.text == "5" and calls == [(2, 3)]
    assert not any(isinstance(e, Notice) and e.code == "off_topic_call" for e in result.events)


@pytest.mark.off_topic
def test_calls_after_a_tool_result_are_not_judged() -> None:
    # lookup fits the request; add (0.05 against it) follows from lookup's result
    # ("and": asked once for more calls, the model repeats the lookup)
    steps = [call("lookup", key="price"), call("lookup", key="price"), call("add", a=1, b=2), "3"]
    a, _ = agent(steps)
    result = a.run("Look up the key 'price' and add one and two to it.")
    assert [c.name for c in result.tool_calls] == ["lookup", "add"] and calls == [(1, 2)]


@pytest.mark.off_topic
def test_the_native_track_is_not_judged() -> None:
    from lar.types import ModelResponse, ToolCall

    native = ModelResponse(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 2})])
    a, _ = agent([native, "Leonardo da Vinci."], track="native")
    result = a.run("Who painted the Mona Lisa?")
    assert calls == [(1, 2)] and result.text == "Leonardo da Vinci."


@pytest.mark.off_topic
def test_off_topic_below_null_switches_the_check_off(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text("agent:\n  off_topic_below: null\n")
    a, _ = agent([call("add", a=1, b=2), "Paris."])
    a.run("Who painted the Mona Lisa?")
    assert calls == [(1, 2)]


@tool
def get_order(order_id: str) -> str:
    """One of my orders by number: item and price in US dollars."""
    return "lamp, 120 USD"


@tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money between currencies (ISO codes)."""
    calls.append((int(amount), 0))
    return f"{amount * 0.9:.1f} {to_currency}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    calls.append((0, 0))
    return "sent"


@pytest.mark.off_topic
def test_a_skipped_first_step_is_asked_for_once() -> None:
    # the model jumps to the conversion with an amount the request never gave
    invented = call("convert_currency", amount=100, from_currency="USD", to_currency="EUR")
    steps = [
        invented,
        call("get_order", order_id="5521"),
        call("convert_currency", amount=120, from_currency="USD", to_currency="EUR"),
        "108 euros.",
    ]
    a, engine = agent(steps, tools=[get_order, convert_currency])
    result = a.run("What was the total of my order 5521, in euros?")
    assert [c.name for c in result.tool_calls] == ["get_order", "convert_currency"]
    assert calls == [(120, 0)] and result.text == "108 euros."
    notices = {e.code: e.message for e in result.events if isinstance(e, Notice)}
    assert "amount, from_currency not in the conversation" in notices["ungrounded_call"]
    nudge = last_user(engine, 1)
    assert 'does not give amount=100, from_currency="USD". Find it first' in nudge
    assert "# Tools" in engine.calls[1][0].content  # the tools stay listed for the first step
    assert "does not give" not in last_user(engine, 2)  # the nudge is given for one turn only


@pytest.mark.off_topic
def test_a_call_waiting_for_another_calls_result_is_deferred() -> None:
    # both steps in one reply, the second with a placeholder for the first one's result
    both = "\n".join(
        [
            call("get_order", order_id="5521"),
            call("convert_currency", amount=0, from_currency="USD", to_currency="EUR"),
        ]
    )
    steps = [
        both,
        call("convert_currency", amount=120, from_currency="USD", to_currency="EUR"),
        "108 euros.",
    ]
    a, _ = agent(steps, tools=[get_order, convert_currency])
    result = a.run("What was the total of my order 5521, in euros?")
    assert [c.name for c in result.tool_calls] == ["get_order", "convert_currency"]
    assert calls == [(120, 0)]  # the placeholder call never ran
    notices = {e.code: e.message for e in result.events if isinstance(e, Notice)}
    said = notices["deferred_call"]
    assert re.search(r"convert_currency 0\.3\d, amount, from_currency not in", said)


@pytest.mark.off_topic
def test_an_invented_value_twice_gets_the_answer_without_tools() -> None:
    made_up = call("send_email", to="friend@example.com", body="Hello!")
    a, engine = agent([made_up, made_up, "Hello!"], tools=[send_email])
    result = a.run("Say hello.")
    assert result.text == "Hello!" and result.tool_calls == [] and calls == []
    codes = [e.code for e in result.events if isinstance(e, Notice)]
    assert codes == ["ungrounded_call", "off_topic_call"]
    assert "# Tools" in engine.calls[1][0].content
    assert "# Tools" not in engine.calls[2][0].content  # answer mode


@pytest.mark.off_topic
def test_a_follow_up_is_judged_with_the_request_before_it() -> None:
    # "What about size?" alone scores 0.07 against lookup; with the request it follows, 0.69
    a, _ = agent([call("lookup", key="colour"), "red", call("lookup", key="size"), "large"])
    history: list[Message] = []
    a.run("Look up the key colour.", history=history)
    result = a.run("What about size?", history=history)
    assert result.text == "large" and [c.name for c in result.tool_calls] == ["lookup"]


def test_a_reused_call_id_runs_both_calls(tmp_path: Path) -> None:
    """Endpoints that omit ids get `call_0` every turn; the second call must run, not be answered
    with the first one's recorded result."""
    from lar.agents.state import TaskStore
    from lar.types import ModelResponse, ToolCall

    first = ModelResponse(tool_calls=[ToolCall("call_0", "add", {"a": 1, "b": 2})])
    second = ModelResponse(tool_calls=[ToolCall("call_0", "add", {"a": 3, "b": 4})])
    tasks = TaskStore(tmp_path / "lar.db")
    a, _ = agent([first, second, "3 and 7"], tasks=tasks, traces=False, track="native")
    result = a.run("add 1 and 2, then 3 and 4")
    assert calls == [(1, 2), (3, 4)]
    assert [c.result for c in result.tool_calls] == [3, 7]
    ids = [e.result.call_id for e in result.events if isinstance(e, ToolCallFinished)]
    assert len(set(ids)) == 2
    a.close()
    tasks.close()


def test_the_default_track_follows_the_engine_and_the_catalog() -> None:
    from types import SimpleNamespace
    from typing import Any

    from lar.agents.results import resolve_track

    def engine(kind: str, model: str) -> Any:
        return SimpleNamespace(kind=kind, name=model, model=model)

    embedded = engine("llamacpp", "qwen2.5-coder-1.5b-instruct")
    assert resolve_track(embedded, None) == "protocol"  # the catalog's word
    assert resolve_track(embedded, "auto") == "protocol"
    assert resolve_track(engine("llamacpp", "any.gguf"), None) == "protocol"
    assert resolve_track(embedded, "constrained") == "constrained"  # an explicit choice wins
    served = engine("openai", "qwen2.5-coder-1.5b-instruct")  # same model, another server
    assert resolve_track(served, None) == "protocol"
    assert resolve_track(engine("openai", "gpt-x"), None) == "native"
    assert resolve_track(engine("scripted", "scripted"), None) == "protocol"


def test_on_the_native_track_a_repeated_call_asks_for_the_answer() -> None:
    from lar.types import ModelResponse, ToolCall

    again = ModelResponse(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 2})])
    a, engine = agent([again, again, "It is 3."], track="native")
    result = a.run("1+2?")
    assert result.text == "It is 3." and calls == [(1, 2)]  # run once, not three times
    assert any(isinstance(e, Notice) and e.code == "repeated_call" for e in result.events)
    engine.assert_complete()


def test_a_call_cut_off_at_max_tokens_does_not_run_with_its_cut_values() -> None:
    from lar.types import ModelResponse

    calls.clear()
    cut = ModelResponse(content='<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2',
                        finish_reason="length")  # fmt: skip
    a, engine = agent([cut, "Three."])
    result = a.run("What is 1 plus 23?")
    assert calls == [] and result.tool_calls == []  # b=2 was b=23 before the cut
    notices = [e for e in result.events if isinstance(e, Notice) and e.code == "cut_call"]
    assert len(notices) == 1 and "add" in notices[0].message
    assert result.text == "Three." and "add(" not in engine.calls[1][0].content  # no tools
    # A whole reply that merely ends at max_tokens is taken as it is.
    whole = ModelResponse(content=call("add", a=1, b=23), finish_reason="length")
    a, _ = agent([whole, "24"])
    assert a.run("What is 1 plus 23?").text == "24" and calls == [(1, 23)]


@tool
def fetch(key: str) -> str:
    """Fetch a stored key."""
    raise ValueError(f"no key {key!r}")


def test_answer_mode_counts_only_this_requests_results() -> None:
    # A chat: the first request's good result is not data for the second, whose only call
    # failed, so the second answer mode says nothing was fetched and that the call did not work.
    from lar.calling.prompt import FAILED_TAIL

    steps = [call("add", a=1, b=2), "3.", call("fetch", key="alpha"), "I could not fetch it."]
    a, engine = agent(steps, tools=[add, fetch], max_turns=2)
    history: list[Message] = []
    a.run("1+2?", history=history)
    result = a.run("Fetch the key alpha.", history=history)
    assert result.text.startswith("I could not fetch it.") and "fetch did not work" in result.text
    assert [m.failed for m in history if m.role == "tool"] == [False, True]
    system, last = engine.calls[3][0].content, last_user(engine, 3)
    assert NO_TOOL_NOTE in system and ANSWER_MODE_NOTE not in system
    assert last.endswith(FAILED_TAIL)
    first_answer = engine.calls[1]
    assert ANSWER_MODE_NOTE in first_answer[0].content and not last_user(engine, 1).endswith(
        FAILED_TAIL
    )


def test_an_answer_quoting_its_calls_header_is_not_a_described_call() -> None:
    # The model copied the result's header, then answered: no correction round, and the user
    # gets the figure without the header.
    echo = 'lookup(key="x") returned:\nvalue of x\n\nSo x is value of x.'
    a, engine = agent([call("lookup", key="x"), echo])
    result = a.run("What is x?")
    engine.assert_complete()  # two model calls: no correction round
    assert result.text == "value of x\n\nSo x is value of x."
    assert not any(isinstance(e, Notice) and e.code == "described_call" for e in result.events)


def test_a_call_described_after_another_ran_is_still_corrected() -> None:
    described = 'lookup(key="x") returned:\nvalue of x\n\nNow I need lookup(key="y").'
    a, engine = agent([call("lookup", key="x"), described, call("lookup", key="y"), "Both."])
    result = a.run("What is x?")
    assert [c.arguments for c in result.tool_calls] == [{"key": "x"}, {"key": "y"}]
    assert any(isinstance(e, Notice) and e.code == "described_call" for e in result.events)


def test_a_result_the_model_wrote_for_a_call_it_did_not_make_is_the_call() -> None:
    # It imitates the results it is shown: a call that reads only runs, the made-up outcome
    # is dropped.
    made_up = '<tool_result>\nmeasure(key="x") returned:\nx is 2 m\n</tool_result>'
    a, engine = agent([made_up, "It is 7 m."], tools=[measure])
    result = a.run("How long is x?")
    assert [(c.name, c.result) for c in result.tool_calls] == [("measure", "x is 7 m")]
    assert result.text == "It is 7 m."
    repaired = [e for e in result.events if isinstance(e, Notice) and e.code == "repaired"]
    assert repaired and 'measure(key="x")' in repaired[0].message


def test_a_made_up_result_of_a_call_with_effects_is_asked_for_not_run() -> None:
    # lookup may have effects: the made-up block is not a yes to run it. The model is asked
    # once for the call itself, and its real call runs.
    made_up = '<tool_result>\nlookup(key="x") returned:\nvalue of nothing\n</tool_result>'
    a, engine = agent([made_up, call("lookup", key="x"), "It is value of x."])
    result = a.run("What is x?")
    engine.assert_complete()
    assert [(c.name, c.result) for c in result.tool_calls] == [("lookup", "value of x")]
    assert result.text == "It is value of x."
    assert any(isinstance(e, Notice) and e.code == "made_up_result" for e in result.events)
    assert "was never called: that result is made up" in last_user(engine, 1)


def test_a_made_up_result_is_never_the_answer() -> None:
    # On the last turn nothing can be asked: the invented outcome is cut, and the user gets
    # what the call that did run found.
    made_up = '<tool_result>\nlookup(key="y") returned:\nstored y\n</tool_result>'
    a, engine = agent([call("lookup", key="x"), made_up], max_turns=2)
    result = a.run("What is x?")
    assert [c.name for c in result.tool_calls] == ["lookup"]
    assert "stored y" not in result.text
    assert result.text == "Here is what lookup found:\nvalue of x"


def test_a_copy_of_a_result_it_got_is_an_answer_not_a_call() -> None:
    echo = '<tool_result>\nlookup(key="x") returned:\nvalue of x\n</tool_result>'
    a, engine = agent([call("lookup", key="x"), echo])
    result = a.run("What is x?")
    engine.assert_complete()
    assert len(result.tool_calls) == 1 and result.text == "value of x"


def test_a_copy_of_a_result_under_another_tools_name_is_data_not_made_up() -> None:
    # The model echoed what lookup returned under a name it invented: the data is real, so it
    # is neither a call to make nor an outcome to cut, and no correction round is spent.
    key = "the garden shed"
    echo = f'<tool_result>\nfind_value(key="{key}") returned:\nvalue of {key}\n</tool_result>'
    # The echo is the tool's output given as the answer: asked once for a sentence instead
    # (pasted_result), never for the call it named.
    a, engine = agent([call("lookup", key=key), echo, "It holds the value of the garden shed."])
    result = a.run("What is in the garden shed?")
    engine.assert_complete()
    assert [c.name for c in result.tool_calls] == ["lookup"]
    assert result.text == "It holds the value of the garden shed."
    codes = [e.code for e in result.events if isinstance(e, Notice)]
    assert "made_up_result" not in codes and codes.count("pasted_result") == 1


def test_a_short_result_in_another_tools_name_is_still_made_up() -> None:
    # A bare figure is in many results; it does not make a block of another call a copy.
    made_up = '<tool_result>\nstore(key="x") returned:\nx\n</tool_result>'
    a, engine = agent([call("lookup", key="x"), made_up, "It is value of x."])
    result = a.run("What is x?")
    assert result.text == "It is value of x."
    assert any(isinstance(e, Notice) and e.code == "made_up_result" for e in result.events)


def test_a_narrower_read_showing_a_value_it_got_is_the_answer() -> None:
    # The install demo's shape: the whole file was read, then the value was shown under the
    # call that would find it (a keyword added). Running that call would cost a model call
    # and tell nothing new.
    narrowed = (
        '<tool_result>\nsettings(app="app", keyword="version") returned:\n0.1.0\n</tool_result>'
    )
    a, engine = agent([call("settings", app="app", keyword=""), narrowed], tools=[settings])
    result = a.run("What version does the app declare?")
    engine.assert_complete()
    assert [c.name for c in result.tool_calls] == ["settings"]
    assert result.text == "0.1.0"
    assert not any(isinstance(e, Notice) and e.code == "repaired" for e in result.events)


@pytest.mark.parametrize(
    "block",
    [
        'settings(app="other", keyword="version") returned:\n0.1.0',  # another target
        'settings(app="app", keyword="version") returned:\n0.2.0',  # a value it never got
    ],
)
def test_a_narrower_read_on_another_target_or_value_is_still_made_up(block: str) -> None:
    made_up = f"<tool_result>\n{block}\n</tool_result>"
    a, engine = agent([call("settings", app="app"), made_up, "Done."], tools=[settings])
    result = a.run("What version does the app declare?")
    assert len(result.tool_calls) == 2  # the written call ran: its result was not the answer
    assert any(isinstance(e, Notice) and e.code == "repaired" for e in result.events)


@tool(read_only=True)
def settings(app: str, keyword: str = "") -> str:
    """Read an app's settings, or only the lines with a keyword."""
    lines = [f"name = {app}", "version = 0.1.0" if app == "app" else "version = 3.4.5"]
    return "\n".join(line for line in lines if keyword in line)


@tool(read_only=True)
def measure(key: str) -> str:
    """Measure a thing by its key."""
    return f"{key} is 7 m"


@tool(idempotent=True)
def remember(key: str) -> str:
    """Remember a thing by its key (stored once however often it is called)."""
    return f"kept {key}"


@pytest.mark.parametrize(
    ("kind", "results", "stop", "text"),
    [
        # changes nothing: it runs, and what it found is the answer (no third model call)
        (measure, ["a is 7 m", "b is 7 m"], "answer", "Here is what measure found:\nb is 7 m"),
        # stores something (idempotent is not enough): the run stops, the call is not made
        (remember, ["kept a"], "max_turns", None),
    ],
)
def test_a_last_turn_call_runs_only_when_its_tool_changes_nothing(
    kind: object, results: list[str], stop: str, text: str | None
) -> None:
    steps = [call(kind.name, key="a"), call(kind.name, key="b")]  # type: ignore[attr-defined]
    a, engine = agent(steps, tools=[kind], max_turns=2)
    result = a.run(f"{kind.name.capitalize()} the things.")  # type: ignore[attr-defined]
    engine.assert_complete()
    assert [c.result for c in result.tool_calls] == results
    assert result.stop_reason == stop
    if text is not None:
        assert result.text == text


@tool
def read_lines(path: str) -> str:
    """Read a file's lines, numbered."""
    return 'L1: [project]\nL2: name = "shed"\nL3: version = "2.4.1"\nL4: readme = "README.md"'


def test_an_answer_that_pastes_a_tools_output_is_asked_for_once_as_a_sentence() -> None:
    pasted = 'L1: [project]\nL2: name = "shed"\nL3: version = "2.4.1"'
    a, engine = agent(
        [call("read_lines", path="p.toml"), pasted, "The version is 2.4.1."], tools=[read_lines]
    )
    result = a.run("Which version does p.toml declare?")
    engine.assert_complete()
    assert result.text == "The version is 2.4.1."
    assert [e.code for e in result.events if isinstance(e, Notice)] == ["pasted_result"]
    assert "copies the tool's output back" in last_user(engine, 2)
    assert len(result.tool_calls) == 1  # asked for a sentence, not for another call


def test_an_answer_that_quotes_a_value_in_its_own_sentence_is_not_pasted() -> None:
    answer = 'The file declares version = "2.4.1", under [project].'
    a, engine = agent([call("read_lines", path="p.toml"), answer], tools=[read_lines])
    result = a.run("Which version does p.toml declare?")
    engine.assert_complete()
    assert result.text == answer
    assert not any(isinstance(e, Notice) and e.code == "pasted_result" for e in result.events)


def test_a_pasted_answer_asked_for_once_is_taken_the_second_time() -> None:
    pasted = 'L2: name = "shed"\nL3: version = "2.4.1"'
    a, engine = agent([call("read_lines", path="p.toml"), pasted, pasted], tools=[read_lines])
    result = a.run("Which version does p.toml declare?")
    engine.assert_complete()
    assert "2.4.1" in result.text
    codes = [e.code for e in result.events if isinstance(e, Notice)]
    assert codes.count("pasted_result") == 1
