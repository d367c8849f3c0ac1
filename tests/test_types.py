import json

import pytest

from lar.types import (
    EVENT_TYPES,
    ContextCompressed,
    ErrorEvent,
    Final,
    MemoryRecalled,
    MemoryWritten,
    Message,
    ModelCalled,
    ModelResponse,
    Notice,
    Routed,
    RunStarted,
    SubTaskFinished,
    SubTaskStarted,
    TextDelta,
    Timings,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolError,
    ToolResult,
    Usage,
    event_from_json,
    event_to_json,
    from_dict,
    to_dict,
)

EVENTS = [
    RunStarted("run_1", "m", "protocol"),
    TextDelta("hé"),
    Routed(
        "small", "heuristic", "simple", "complexity 0.01 < 0.20", "simple", 0.01, "trivial", 1024
    ),
    ModelCalled(1, "m", "llamacpp", Usage(3, 4), Timings(10.0, 2.0, 5.0, 3.0), 1, True),
    ModelCalled(
        2,
        "m",
        "openai",
        Usage(3, 4),
        Timings(10.0),
        0,
        energy_j=1.5,
        power_w=12.0,
        failover=["primary: connection refused"],
    ),  # fmt: skip
    ToolCallStarted(ToolCall("c1", "add", {"a": 1, "b": [1, {"x": None}]}, raw="{...}")),
    ToolCallFinished(
        ToolResult("c1", "add", "boom", ok=False, error=ToolError("e", "d", "tool_error")), 1.5
    ),
    ToolCallFinished(ToolResult("c2", "add", "3", value=3), 0.1),
    Notice("repaired", "fixed"),
    MemoryRecalled("tea?", [{"id": "m_1", "score": 0.03, "cosine": 0.61, "bm25_rank": None}], 12.5),
    MemoryWritten("superseded", "I prefer coffee.", "m_2", "m_1"),
    MemoryWritten("refused", "pid 42 runs", reason="holds a process id"),
    ContextCompressed("history", 1800, 420, "3 rounds summarized"),
    SubTaskStarted("t1", "orders", "Read the orders.", "t_abc.t1"),
    SubTaskFinished(
        "t2", "logistics", "timeout", "no answer within 65 s", "", "t_abc.t2", 1.5, 2.5
    ),
    Final("done", "answer", Usage(1, 2), 12.0, 2),
    ErrorEvent("engine_error", "down"),
]


def test_every_event_type_is_covered() -> None:
    assert {type(e).type for e in EVENTS} == set(EVENT_TYPES)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_events_round_trip_through_json(event: object) -> None:
    text = event_to_json(event)  # type: ignore[arg-type]
    assert json.loads(text)["type"] == type(event).type
    assert event_from_json(text) == event


def test_messages_and_responses_round_trip() -> None:
    msg = Message("assistant", "hi", tool_calls=[ToolCall("c", "f", {"k": "v"})])
    assert from_dict(Message, json.loads(json.dumps(to_dict(msg)))) == msg
    resp = ModelResponse("x", [ToolCall("c", "f", {})], Usage(1, 1), Timings(1.0), "m", "e", "stop")
    assert from_dict(ModelResponse, json.loads(json.dumps(to_dict(resp)))) == resp


def test_unknown_event_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown event type 'nope'; known: run_started"):
        event_from_json('{"type": "nope"}')


def test_usage_adds_up() -> None:
    assert (Usage(1, 2) + Usage(3, 4)).total_tokens == 10


def test_codes_are_an_enum_that_survives_json() -> None:
    from lar.types import Code, Notice, ToolError

    event = Notice(Code.REPAIRED, "repaired malformed tool-call JSON")
    again = event_from_json(event_to_json(event))
    assert isinstance(again, Notice) and again.code is Code.REPAIRED
    assert '"code": "repaired"' in event_to_json(event)  # the wire shows the plain value
    assert ToolError("x", "y", Code.DENIED).code == "denied"  # compares as its string
    newer = event_from_json('{"type": "notice", "code": "from_a_newer_version", "message": "m"}')
    assert isinstance(newer, Notice) and newer.code == "from_a_newer_version"  # kept as written
