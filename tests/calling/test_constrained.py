"""Constrained track (lar.calling.constrained): the schema a reply is decoded under, how the
reply is read, and the fallback when an endpoint refuses the schema."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lar.agents.agent import Agent
from lar.calling.constrained import (
    MAX_CALLS,
    AnswerStream,
    constrained_system_prompt,
    parse_constrained,
    reply_schema,
)
from lar.tools.base import SchemaTool, tool
from lar.types import ModelResponse, Notice


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather for a city."""
    return f"{city}: 18 C, sunny"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_the_schema_takes_an_answer_or_calls_to_listed_tools_with_their_arguments() -> None:
    schema = reply_schema([get_weather, add])
    ok = [
        {"answer": "Cervantes wrote it."},
        {"calls": [{"name": "get_weather", "arguments": {"city": "Lisboa"}}]},
        {"calls": [{"name": "add", "arguments": {"a": 1, "b": 2}},
                   {"name": "get_weather", "arguments": {"city": "Braga", "unit": "celsius"}}]},
    ]  # fmt: skip
    for value in ok:
        jsonschema.validate(value, schema)
    bad = [
        {"calls": [{"name": "get_capital", "arguments": {"country": "France"}}]},  # not listed
        {"calls": [{"name": "get_weather", "arguments": {}}]},  # required argument missing
        {"calls": [{"name": "add", "arguments": {"a": "one", "b": 2}}]},  # wrong type
        {"calls": [{"name": "add", "arguments": {"a": 1, "b": 2, "c": 3}}]},  # extra argument
        {"calls": []},
        {"calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}] * (MAX_CALLS + 1)},
        {"answer": "x", "calls": []},
        "plain text",
    ]
    for value in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(value, schema)


def test_number_formats_stay_out_of_the_grammar_and_string_formats_stay_in() -> None:
    params = {
        "type": "object",
        "properties": {
            "rate": {"type": "number", "format": "float", "default": 1.5},
            "day": {"type": "string", "format": "date"},
        },
    }
    spec = SchemaTool("f", "f", params, dict)
    (call,) = [reply_schema([spec])["anyOf"][1]["properties"]["calls"]["items"]]
    props = call["properties"]["arguments"]["properties"]
    assert props == {"rate": {"type": "number"}, "day": {"type": "string", "format": "date"}}


def test_a_reply_is_read_as_an_answer_or_calls_and_anything_else_by_the_text_parser() -> None:
    known = {"get_weather": ["city", "unit"]}
    answer = parse_constrained(ModelResponse(content='{"answer": " Cervantes. "}'), known)
    assert answer.calls == [] and answer.text == "Cervantes." and answer.format == "constrained"
    body = {"calls": [{"name": "get_weather", "arguments": {"city": "Lisboa"}}]}
    calls = parse_constrained(ModelResponse(content=json.dumps(body, indent=2)), known)
    assert [(c.name, c.arguments) for c in calls.calls] == [("get_weather", {"city": "Lisboa"})]
    # an endpoint that ignored the schema: the protocol parser reads what it wrote
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Porto"}}</tool_call>'
    fallback = parse_constrained(ModelResponse(content=text), known)
    assert [c.arguments for c in fallback.calls] == [{"city": "Porto"}]
    assert parse_constrained(ModelResponse(content="Just words."), known).text == "Just words."


def test_the_prompt_lists_the_tools_and_both_reply_shapes() -> None:
    prompt = constrained_system_prompt("Base.", [get_weather])
    assert prompt.startswith("Base.\n\n# Tools\nget_weather(") and '{"answer": ' in prompt
    assert constrained_system_prompt("Base.", []) == "Base."


def _run(url: str, question: str, **kw: Any) -> Any:
    """One run on an OpenAI-compatible endpoint, its connections closed inside the run's loop
    (a connection left open would warn here, in this test)."""
    from lar.agents.runner import Runner
    from lar.config import LarConfig
    from lar.engines.openai_http import OpenAIEngine

    async def main() -> Any:
        engine = OpenAIEngine(base_url=url, model="m", name="m", retries=0)
        runner = Runner(config=LarConfig(), engine=engine, traces=False, memory=False)
        try:
            session = runner.session(Agent(tools=[get_weather], track="constrained", **kw),
                                     workspace=Path("."))  # fmt: skip
            return await session.arun(question)
        finally:
            await runner.aclose()

    result = asyncio.run(main())
    gc.collect()
    return result


def _server_reply(body: dict[str, Any]) -> Any:
    from lar.testing import text_reply

    if "response_format" in body:
        return 400, {"error": {"message": "json_schema not supported"}}
    if body["messages"][-1]["role"] == "tool" or "<tool_result" in body["messages"][-1]["content"]:
        return text_reply("It is 18 C and sunny in Lisbon.")
    call = {"name": "get_weather", "arguments": {"city": "Lisbon"}}
    return text_reply(f"<tool_call>{json.dumps(call)}</tool_call>")


def test_a_schema_the_endpoint_refuses_falls_back_to_the_text_parser() -> None:
    from lar.testing import MockOpenAIServer

    with MockOpenAIServer([_server_reply], repeat_last=True) as srv:
        result = _run(srv.url, "Weather in Lisbon?")
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    assert result.text == "It is 18 C and sunny in Lisbon."
    sent = [("response_format" in r) for r in srv.requests]
    assert sent == [True, False, False]  # asked once with the schema, then without it
    schema = srv.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema == reply_schema([get_weather])
    notices = [e for e in result.events if isinstance(e, Notice) and e.code == "unconstrained"]
    assert len(notices) == 1 and "json_schema not supported" in notices[0].message


def test_a_request_over_the_window_is_not_taken_for_a_refused_schema() -> None:
    from lar.errors import EngineError
    from lar.testing import MockOpenAIServer

    def too_long(body: dict[str, Any]) -> Any:
        message = "request (4124 tokens) exceeds the available context size (4096 tokens)"
        return 400, {"error": {"message": message}}

    with MockOpenAIServer([too_long], repeat_last=True) as srv:
        with pytest.raises(EngineError) as failed:
            _run(srv.url, "Weather in Lisbon?")
    assert failed.value.status == 400 and "context size" in str(failed.value)
    assert len(srv.requests) == 1  # not sent again without the schema, as if it were refused


def test_answer_mode_on_the_constrained_track_sends_no_schema() -> None:
    from lar.testing import MockOpenAIServer, text_reply

    replies = [
        text_reply(json.dumps({"calls": [{"name": "get_weather",
                                          "arguments": {"city": "Lisbon"}}]})),
        text_reply("Sunny, 18 C."),
    ]  # fmt: skip
    with MockOpenAIServer(replies) as srv:
        result = _run(srv.url, "Weather in Lisbon?", max_turns=2)
    assert result.text == "Sunny, 18 C." and [c.name for c in result.tool_calls] == ["get_weather"]
    assert ["response_format" in r for r in srv.requests] == [True, False]  # last turn: answer


@pytest.mark.parametrize("step", [1, 2, 5, 64])
def test_an_answer_streams_as_its_text_and_calls_stream_nothing(step: int) -> None:
    answer = r"  Em \"Lisboa\":\n18 C, sol \u2600 \ud83d\ude00 fim"
    reply = '{ "answer" : "' + answer + '"}'
    stream = AnswerStream()
    shown = "".join(stream.feed(reply[i : i + step]) for i in range(0, len(reply), step))
    assert shown == json.loads(reply)["answer"].strip() == 'Em "Lisboa":\n18 C, sol ☀ 😀 fim'
    for other in ('{"calls": [{"name": "x", "arguments": {"answer": "no"}}]}', "plain text"):
        stream = AnswerStream()
        assert "".join(stream.feed(other[i : i + step]) for i in range(0, len(other), step)) == ""


def test_a_constrained_run_streams_only_the_answer_text() -> None:
    from lar.engines.scripted import ScriptedEngine
    from lar.types import TextDelta

    calls = {"calls": [{"name": "get_weather", "arguments": {"city": "Lisboa"}}]}
    engine = ScriptedEngine([json.dumps(calls), json.dumps({"answer": "Em Lisboa: 18 C, sol."})])
    agent = Agent(engine=engine, tools=[get_weather], track="constrained", memory=False)
    events = list(agent.stream("Como está o tempo em Lisboa?"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Em Lisboa: 18 C, sol."
    assert events[-1].text == "Em Lisboa: 18 C, sol."
