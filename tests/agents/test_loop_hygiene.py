"""X6 (the full tool listing every N turns, a reminder in between) and A3 (a history of more
than 100 messages is compressed), on a scripted engine."""

from __future__ import annotations

import json
from pathlib import Path

from lar import Agent, tool
from lar.agents.context import compress_messages
from lar.engines.scripted import ScriptedEngine
from lar.types import ContextCompressed, Message, ToolCall


@tool
def add(a: int, b: int) -> int:
    """Add two integers exactly."""
    return a + b


@tool
def lookup(key: str) -> str:
    """Look a key up in the user's notes."""
    return f"value of {key}"


FULL = "Add two integers exactly."  # the description: only the full listing has it
REMINDER = "Tools (as listed before): add(a: int, b: int); lookup(key: str)"


def call(name: str, **args: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def test_the_full_listing_goes_on_turns_1_11_and_21_and_a_reminder_in_between() -> None:
    steps: list[object] = [call("add", a=n, b=1) for n in range(24)] + ["done"]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(tools=[add, lookup], engine=engine, workspace=Path("."), max_turns=30)
    agent = agent.replace(policies=())
    result = agent.run("add the numbers one by one")
    assert result.stop_reason == "answer" and result.text == "done"
    assert len(engine.calls) == 25
    systems = [messages[0].content for messages in engine.calls]
    full = [n for n, text in enumerate(systems, start=1) if FULL in text]
    reminded = [n for n, text in enumerate(systems, start=1) if REMINDER in text]
    assert full == [1, 11, 21]
    assert reminded == [n for n in range(1, 26) if n not in (1, 11, 21)]
    # the reminder keeps the call format: the model still knows how to call
    assert all("<tool_call>" in text for text in systems)
    # and it is shorter than the listing it replaces
    assert len(systems[1]) < len(systems[0])
    assert len(result.tool_calls) == 24


def test_every_turn_gets_the_full_listing_when_configured_so(tmp_path: Path) -> None:
    from lar.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  tool_listing_every: 1\n")
    engine = ScriptedEngine([call("add", a=1, b=2), call("add", a=3, b=4), "7"])
    agent = Agent(
        tools=[add, lookup], engine=engine, workspace=Path("."), config=load_config(path)
    ).replace(policies=())
    agent.run("add")
    assert all(FULL in messages[0].content for messages in engine.calls)


def chat(pairs: int) -> list[Message]:
    out: list[Message] = []
    for n in range(pairs):
        out += [Message("user", f"question {n}"), Message("assistant", f"answer {n}")]
    return out


def test_a_history_of_120_messages_is_compressed_before_the_model_sees_it() -> None:
    history = chat(60)
    assert len(history) == 120
    engine = ScriptedEngine(["fine"])
    agent = Agent(tools=[add], engine=engine, workspace=Path(".")).replace(policies=())
    result = agent.run("and now?", history=history)
    sent = engine.calls[0]
    assert len(sent) < 60  # system + about half the history
    assert sent[-1].content.startswith("and now?")
    assert "question 0" not in " ".join(m.content for m in sent[1:])
    assert "Progress so far:" in sent[0].content and "earlier messages left out" in sent[0].content
    squeezed = [e for e in result.events if isinstance(e, ContextCompressed)]
    assert len(squeezed) == 1 and squeezed[0].part == "history"
    assert squeezed[0].after < squeezed[0].before
    assert "121 messages" in squeezed[0].detail
    # nothing is lost: the caller's history keeps every message
    assert len(history) == 122


def test_a_history_of_100_messages_is_sent_whole() -> None:
    engine = ScriptedEngine(["fine"])
    agent = Agent(tools=[add], engine=engine, workspace=Path(".")).replace(policies=())
    history = chat(49) + [Message("assistant", "anything else?")]
    result = agent.run("and now?", history=history)
    assert len(history) == 101 and len(engine.calls[0]) == 1 + 100
    assert not [e for e in result.events if isinstance(e, ContextCompressed)]


def tool_round(n: int) -> list[Message]:
    c = ToolCall(f"c{n}", "add", {"a": n, "b": 1})
    return [
        Message("assistant", "", tool_calls=[c]),
        Message("tool", str(n + 1), tool_call_id=c.id),
    ]


def test_a_long_tool_loop_keeps_its_request_and_never_a_result_without_its_call() -> None:
    history = [Message("user", "the goal")] + [m for n in range(70) for m in tool_round(n)]
    squeezed = compress_messages(history, 100)
    assert squeezed is not None
    assert squeezed.history[0].content == "the goal"  # the request is kept in front
    assert squeezed.history[1].role == "assistant" and squeezed.history[1].tool_calls
    assert len(squeezed.history) <= 52
    assert squeezed.summary.startswith(f"{squeezed.left_out} earlier messages left out")
    assert "tool calls (add)" in squeezed.summary and len(squeezed.summary) <= 100


def test_the_cut_stays_put_while_the_rest_fits_so_the_prompt_start_is_reused() -> None:
    history = chat(60)
    first = compress_messages(history, 100)
    assert first is not None
    grown = history + chat(5)
    again = compress_messages(grown, 100, first.cut)
    assert again is not None and again.cut == first.cut
    much_more = grown + chat(30)
    moved = compress_messages(much_more, 100, first.cut)
    assert moved is not None and moved.cut > first.cut
    assert len(much_more) - moved.cut <= 100


def test_an_engine_with_a_prompt_cache_gets_the_full_listing_every_turn_unless_configured() -> None:
    from lar.agents.request import listing_every

    class Cached(ScriptedEngine):
        prompt_cache = True  # as the embedded engine: the prompt's prefix stays cached

    assert listing_every(None, Cached([])) == 1
    assert listing_every(None, ScriptedEngine([])) == 10
    assert listing_every(4, Cached([])) == 4
    engine = Cached([call("add", a=1, b=2), call("add", a=3, b=4), "7"])
    agent = Agent(tools=[add, lookup], engine=engine, workspace=Path(".")).replace(policies=())
    agent.run("add")
    assert all(FULL in messages[0].content for messages in engine.calls)
