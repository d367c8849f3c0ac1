"""Fitting the prompt (X2–X5): shares that flow on, the degradation order, whole messages only."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lar.agents.agent import Agent
from lar.agents.context import (
    PER_MESSAGE,
    MemoryParts,
    TokenCounter,
    allocate,
    fit,
    rounds,
)
from lar.calling.prompt import protocol_system_prompt
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin import builtin_tools
from lar.types import ContextCompressed, Message


def test_allocate_gives_unused_share_to_the_parts_that_need_it() -> None:
    assert allocate(1000, {"system": 150, "history": 400, "memory": 230, "tools": 220}) == {
        "system": 150,
        "history": 400,
        "memory": 230,
        "tools": 220,
    }
    # memory needs nothing: its 230 flow to history first, then tools.
    need = {"system": 100, "history": 900, "memory": 0, "tools": 400}
    limits = allocate(1000, need)
    assert limits["history"] == 400 + 50 + 230  # system's and memory's unused shares
    assert limits["tools"] == 220  # nothing left over for tools
    assert sum(min(need[p], limits[p]) for p in need) == 1000  # all of it used, no more


def conversation(n: int, size: int = 400) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        out.append(Message("user", f"question {i}: " + "word " * (size // 5)))
        out.append(Message("assistant", f"answer {i}: " + "text " * (size // 5)))
    out.append(Message("user", "the latest question"))
    return out


def big_memory() -> MemoryParts:
    return MemoryParts(
        index=[f"- fact number {i} about something long enough" for i in range(30)],
        recalled=[(f"- recalled memory {i} " + "detail " * 40, 0.01 * i) for i in range(8)],
        working="last task: something",
    )


def run_fit(history: list[Message], memory: MemoryParts, n_ctx: int, tools=None):  # type: ignore[no-untyped-def]
    tools = builtin_tools() if tools is None else tools
    return asyncio.run(
        fit(
            counter=TokenCounter(),
            n_ctx=n_ctx,
            reserve=512,
            system="You are Lar.",
            history=history,
            memory=memory,
            tools=tools,
            listing=lambda ts: protocol_system_prompt("", ts),
            used_tools={"file_read"},
        )
    )


def test_degradation_order_is_history_then_memory_then_tools() -> None:
    history = conversation(12)
    fitted = run_fit(history, big_memory(), n_ctx=2048)
    assert [e.part for e in fitted.events] == ["history", "memory", "tools"]
    for e in fitted.events:
        assert e.after < e.before
    # history: the last two rounds whole, and a ≤ 100-character progress line for the rest
    assert fitted.history == history[-3:]
    assert 0 < len(fitted.summary) <= 100 and fitted.summary.startswith("goal: question 0")
    # memory: the lowest-scoring recalled memories went first
    kept = [score for _, score in fitted.memory.recalled]
    assert kept == sorted(kept)[-len(kept) :] and (not kept or min(kept) > 0.0)
    # tools: hidden ones are the least related; the tool the run used stays
    names = [t.name for t in fitted.tools]
    assert "file_read" in names and len(names) < len(builtin_tools())
    for part in ("history", "memory", "tools"):
        assert fitted.tokens[part] <= fitted.limits[part] or part == "history"


def test_only_what_is_over_is_degraded() -> None:
    fitted = run_fit(conversation(20), MemoryParts(index=["- one fact"]), n_ctx=4096, tools=[])
    assert [e.part for e in fitted.events] == ["history"]
    assert fitted.memory.index == ["- one fact"]
    small = run_fit(conversation(1), MemoryParts(), n_ctx=4096, tools=[])
    assert small.events == [] and small.summary == ""


def test_rounds_keep_tool_messages_with_their_user_message() -> None:
    h = [
        Message("user", "a"),
        Message("assistant", "", tool_calls=[]),
        Message("tool", "r", tool_call_id="c", name="t"),
        Message("assistant", "done"),
        Message("user", "b"),
    ]
    assert [len(r) for r in rounds(h)] == [4, 1]


def test_thirty_turns_in_a_4096_context_never_cut_a_message(tmp_path: Path) -> None:
    replies = [(f"Reply {i}: " + "some answer text " * 25).strip() for i in range(30)]
    engine = ScriptedEngine(replies)
    agent = Agent(
        tools=builtin_tools(), engine=engine, n_ctx=4096, max_tokens=512, workspace=tmp_path
    )
    history: list[Message] = []
    said: set[str] = set()
    compressed: list[ContextCompressed] = []
    for i in range(30):
        question = (f"Question {i}: " + "please consider this detail " * 12).strip()
        said.add(question)
        result = agent.run(question, history=history)
        assert result.stop_reason == "answer" and result.text == replies[i]
        said.add(replies[i])
        compressed += [e for e in result.events if isinstance(e, ContextCompressed)]
    counter = TokenCounter()
    for request in engine.calls:
        system, *messages = request
        # every message sent is one the user or model wrote, whole
        assert all(m.content in said for m in messages)
        tokens = sum(asyncio.run(counter.count([m.content for m in request])))
        assert tokens + PER_MESSAGE * len(request) <= 4096 - 512
    assert compressed and {e.part for e in compressed} <= {"history", "tools"}
    assert compressed[0].part == "history" and "earlier rounds" in compressed[0].detail
    assert "Progress so far: goal: Question 0" in engine.calls[-1][0].content
    # a cut is kept while the rest fits: the prompt's start (and the engine's cache) stays put
    starts = [request[1].content for request in engine.calls]
    assert len(set(starts)) <= 8 and starts[-1] != starts[0]
    agent.close()


def test_a_request_that_grows_after_fitting_is_fitted_again(tmp_path: Path) -> None:
    """A one-turn nudge joins the request after its parts were fitted: wherever the history
    leaves the window, the request as sent (nudge included) still fits, cut if it must be."""
    from lar.tools.base import tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "18 C"

    n_ctx, reserve = 1024, 128
    counter = TokenCounter()
    for pad in range(0, 400, 10):  # where the history ends, relative to the window
        history: list[Message] = []
        for i in range(4):
            history += [
                Message("user", f"Question {i}: " + "tell me more " * 20),
                Message("assistant", f"Answer {i}: " + "x" * pad),
            ]
        described = "I would use the get_weather tool with city Porto."
        engine = ScriptedEngine([described, "It is 18 C."])
        agent = Agent(
            tools=[get_weather], engine=engine, n_ctx=n_ctx, max_tokens=reserve,
            track="protocol", memory=False, traces=False, workspace=tmp_path,
        )  # fmt: skip
        agent.run("Weather in Porto?", history=history)
        nudged = engine.calls[1]
        assert "Do not describe the call" in nudged[-1].content  # the nudge was sent
        for request in engine.calls:
            tokens = sum(asyncio.run(counter.count([m.content for m in request])))
            assert tokens + PER_MESSAGE * (len(request) + 1) + reserve <= n_ctx, pad
        agent.close()


def test_a_long_run_of_large_results_gives_way_oldest_first_and_keeps_the_newest() -> None:
    """One run, no earlier rounds to drop: five reads of 1,800 characters each are more than a
    2,048-token window holds. The earlier results are left out whole, each replaced by a line
    that says so, until the request fits; the newest stays as it was (a run failed with
    "request (4126 tokens) exceeds the available context size" before)."""
    from lar.types import ToolCall

    history = [Message("user", "Sum the amounts in the five files.")]
    for i in range(5):
        call = ToolCall(f"c{i}", "file_read", {"path": f"part{i}.json"})
        history += [
            Message("assistant", "", tool_calls=[call]),
            Message("tool", f"{i}: " + "x" * 1800, tool_call_id=f"c{i}", name="file_read"),
        ]
    counter = TokenCounter()
    fitted = asyncio.run(
        fit(
            counter=counter, n_ctx=2048, reserve=512, system="You are Lar.", history=history,
            memory=MemoryParts([], [], ""), tools=[], listing=lambda ts: "",
        )
    )  # fmt: skip
    assert sum(fitted.tokens.values()) <= 2048 - 512
    results = [m for m in fitted.history if m.role == "tool"]
    assert len(results) == 5 and results[-1].content == history[-1].content  # newest kept
    gone = [m for m in results if m.content.startswith("[the result of file_read")]
    assert gone and gone == results[: len(gone)]  # oldest first, whole messages
    assert "left out to fit the context window" in gone[0].content
    assert history[2].content.startswith("0: xxx")  # the run's own history is not changed
    assert any("earlier tool results of this run left out" in e.detail for e in fitted.events)
