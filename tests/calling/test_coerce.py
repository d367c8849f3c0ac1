"""Schema-driven argument coercion and tool-name resolution (T3): only fixes that cannot change
what a call means, each one reported, the model's original output kept in the trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lar import Agent
from lar.calling.coerce import coerce_arguments, coerce_call, fan_out, resolve_name
from lar.calling.corrections import near_name
from lar.engines.scripted import ScriptedEngine
from lar.tools.base import SchemaTool, ToolArgumentError
from lar.traces import TraceStore
from lar.types import Notice, ToolCall

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "zip": {"type": "string"},
        "where": {"$ref": "#/$defs/Place"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "note": {"type": "string"},
        "days": {"type": "integer", "default": 1},
        "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["n"],
    "$defs": {
        "Place": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        }
    },
}


@pytest.mark.parametrize(
    ("given", "wanted"),
    [
        ({"n": "5"}, {"n": 5}),
        ({"n": " 42 "}, {"n": 42}),
        ({"n": "1,000"}, {"n": 1000}),
        ({"n": 7.0}, {"n": 7}),
        ({"n": "7.0"}, {"n": 7}),
        ({"n": 1, "x": "2.5"}, {"n": 1, "x": 2.5}),
        ({"n": 1, "x": "131,5"}, {"n": 1, "x": 131.5}),  # a decimal comma
        ({"n": 1, "x": "1.234,56"}, {"n": 1, "x": 1234.56}),
        ({"n": 1, "x": "-3"}, {"n": 1, "x": -3}),
        ({"n": 1, "flag": "true"}, {"n": 1, "flag": True}),
        ({"n": 1, "flag": "No"}, {"n": 1, "flag": False}),
        ({"n": 1, "unit": "Celsius"}, {"n": 1, "unit": "celsius"}),
        ({"n": 1, "unit": "FAHRENHEIT"}, {"n": 1, "unit": "fahrenheit"}),
        ({"n": 1, "tags": "red"}, {"n": 1, "tags": ["red"]}),
        ({"n": 1, "tags": '["a", "b"]'}, {"n": 1, "tags": ["a", "b"]}),
        ({"n": 1, "ids": ["1", "2"]}, {"n": 1, "ids": [1, 2]}),
        ({"n": 1, "ids": 3}, {"n": 1, "ids": [3]}),
        ({"n": 1, "zip": 1000}, {"n": 1, "zip": "1000"}),
        (
            {"n": 1, "where": {"lat": "38.7", "lon": "-9.1"}},
            {"n": 1, "where": {"lat": 38.7, "lon": -9.1}},
        ),
        ({"n": 1, "where": '{"lat": 1, "lon": 2}'}, {"n": 1, "where": {"lat": 1, "lon": 2}}),
        ({"n": 1, "limit": "10"}, {"n": 1, "limit": 10}),
        ({"N": 3}, {"n": 3}),
        ({"n": 1, "Unit": "celsius"}, {"n": 1, "unit": "celsius"}),
        ({"n": 1, "note": None}, {"n": 1}),
        ({"n": 1, "days": None}, {"n": 1}),
        ({"n": 1, "days": ""}, {"n": 1}),
        ({"n": 1, "tags": []}, {"n": 1}),
    ],
)
def test_unambiguous_fixes(given: dict[str, Any], wanted: dict[str, Any]) -> None:
    out, changes = coerce_arguments(given, SCHEMA)
    assert out == wanted
    assert changes  # every fix is reported


@pytest.mark.parametrize(
    "given",
    [
        {"n": 5},
        {"n": "2.5"},  # never rounded to an integer
        {"n": "five"},
        {"n": 1, "unit": "kelvin"},
        {"n": 1, "flag": "maybe"},
        {"n": 1, "limit": None},  # null is allowed here
        {"n": 1, "note": ""},  # an empty string is a string
        {"n": 1, "limit": None, "label": ""},  # … also where null is allowed too
        {"n": 1, "zip": "01000"},
        {"n": 1, "extra": "x"},  # unknown keys are for validation to report
        {"n": 1, "where": {"lat": 1, "lon": 2}},
    ],
)
def test_what_is_left_alone(given: dict[str, Any]) -> None:
    out, changes = coerce_arguments(given, SCHEMA)
    assert out == given and changes == []


def test_a_whole_number_becomes_a_float_only_where_the_schema_declares_one() -> None:
    floats = {"type": "number", "format": "float"}
    schema = {
        "properties": {
            "rate": floats,
            "weights": {"type": "array", "items": {"type": "number", "format": "double"}},
            "x": {"type": "number"},
            "n": {"type": "integer", "format": "int32"},
        }
    }
    out, changes = coerce_arguments({"rate": 3, "weights": [1, 2.5], "x": 4, "n": 5}, schema)
    assert type(out["rate"]) is float and [type(w) for w in out["weights"]] == [float, float]
    assert type(out["x"]) is int and type(out["n"]) is int  # no format: JSON's number stays
    assert changes == ["rate: 3 → 3.0", "weights[0]: 1 → 1.0"]
    assert coerce_arguments({"rate": True}, schema)[0] == {"rate": True}  # not a number


def test_an_enum_whose_values_fold_together_is_not_guessed() -> None:
    schema = {"type": "object", "properties": {"mode": {"enum": ["Fast", "fast", "slow"]}}}
    assert coerce_arguments({"mode": "FAST"}, schema) == ({"mode": "FAST"}, [])


def test_a_key_is_renamed_only_when_it_does_not_clash() -> None:
    out, _ = coerce_arguments({"n": 1, "N": 2}, SCHEMA)
    assert out == {"n": 1, "N": 2}  # both given: nothing is merged or lost


def test_the_schema_really_rejects_what_coercion_fixes() -> None:
    """Guard: without coercion these calls would fail validation, so the fixes matter."""
    tool = SchemaTool("f", "F.", SCHEMA, lambda **kw: kw)
    with pytest.raises(ToolArgumentError):
        tool.validate({"n": "5"})
    with pytest.raises(ToolArgumentError):
        tool.validate({"n": 1, "unit": "Celsius"})
    fixed, _ = coerce_arguments({"n": "5", "unit": "Celsius"}, SCHEMA)
    assert tool.validate(fixed) == {"n": 5, "unit": "celsius"}


NAMES = ["factorial", "get_weather", "get_forecast", "search.web", "skill_ascii_art", "art"]


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        ("factorial", "factorial"),
        ("math.factorial", "factorial"),
        ("functions.get_weather", "get_weather"),
        ("Get-Weather", "get_weather"),
        ("GET_WEATHER", "get_weather"),
        ("search.web", "search.web"),
        ("tools.search.web", "search.web"),
        ("weather", None),  # a part of a name is not enough
        ("get_capital", None),
        ("ascii-art", "skill_ascii_art"),  # a skill by its own name
        ("functions.ascii_art", "skill_ascii_art"),
        ("art", "art"),  # a listed tool first
    ],
)
def test_resolve_name(name: str, wanted: str | None) -> None:
    assert resolve_name(name, NAMES) == wanted


def test_resolve_name_refuses_when_two_tools_match() -> None:
    assert resolve_name("x.add", ["add", "Add"]) is None


def test_near_name_finds_typos_only() -> None:
    assert near_name("get_wether", NAMES) == "get_weather"
    assert near_name("get_capital", NAMES) is None


def test_coerce_call_keeps_the_original_as_raw() -> None:
    tool = SchemaTool("factorial", "n!.", SCHEMA, lambda **kw: 1)
    call = ToolCall("c1", "math.factorial", {"n": "5"})
    fixed, changes = coerce_call(call, {"factorial": tool})
    assert (fixed.name, fixed.arguments) == ("factorial", {"n": 5})
    assert json.loads(fixed.raw or "") == {"name": "math.factorial", "arguments": {"n": "5"}}
    assert changes == ["tool 'math.factorial' → 'factorial'", 'n: "5" → 5']
    same, none = coerce_call(ToolCall("c2", "factorial", {"n": 5}), {"factorial": tool})
    assert none == [] and same.raw is None


def test_fan_out_only_for_one_packed_parameter() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    }
    tool = SchemaTool("get_weather", "W.", schema, lambda **kw: kw)
    calls = fan_out(ToolCall("c", "get_weather", {"city": ["Porto", "Faro"], "days": 2}), tool)
    assert calls is not None
    assert [c.arguments for c in calls] == [
        {"city": "Porto", "days": 2},
        {"city": "Faro", "days": 2},
    ]
    assert len({c.id for c in calls}) == 2
    assert fan_out(ToolCall("c", "get_weather", {"city": "Porto"}), tool) is None
    assert fan_out(ToolCall("c", "get_weather", {"city": ["Porto"]}), tool) is None


def test_the_loop_runs_the_coerced_call_and_the_trace_keeps_what_the_model_wrote(
    lar_home: Path,
) -> None:
    ran: list[Any] = []
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    def factorial(n: int) -> int:
        ran.append(n)
        out = 1
        for i in range(2, n + 1):
            out *= i
        return out

    tool = SchemaTool("factorial", "n factorial.", schema, factorial)
    text = '<tool_call>\n{"name": "math.factorial", "arguments": {"n": "5"}}\n</tool_call>'
    with Agent(tools=[tool], engine=ScriptedEngine([text, "120"])) as agent:
        result = agent.run("5!?")
    assert ran == [5] and result.text == "120"
    notice = next(e for e in result.events if isinstance(e, Notice) and e.code == "coerced")
    assert "'math.factorial' → 'factorial'" in notice.message and 'n: "5" → 5' in notice.message
    store = TraceStore(lar_home / "lar.db")
    step = next(s for s in store.get(result.run_id).steps if s.kind == "tool")
    assert step.name == "factorial" and step.detail["arguments"] == {"n": 5}
    assert "math.factorial" in step.detail["raw"] and '"5"' in step.detail["raw"]
    store.close()


def test_unknown_arguments_are_dropped_only_for_a_tool_that_changes_nothing() -> None:
    from lar import tool
    from lar.tools.builtin import calculate

    call = ToolCall("c", "calculate", {"expression": "70 * 2.2", "from_unit": "kg", "to": "lb"})
    fixed, changes = coerce_call(call, {"calculate": calculate})
    assert fixed.arguments == {"expression": "70 * 2.2"}
    assert changes == [
        "'from_unit', 'to' dropped (calculate takes no such argument and changes nothing)"
    ]
    assert calculate.validate(fixed.arguments) == {"expression": "70 * 2.2"}

    @tool(permission="confirm")
    def save(path: str, text: str) -> str:
        """Write a file."""
        return path

    kept, none = coerce_call(
        ToolCall("c", "save", {"path": "a", "text": "b", "append": True}), {"save": save}
    )
    assert none == [] and "append" in kept.arguments  # validation refuses it, nothing dropped
    with pytest.raises(ToolArgumentError, match="unknown argument 'append'"):
        save.validate(kept.arguments)
    # Not a whole call without the unknown ones: left for validation to explain.
    bare = ToolCall("c", "calculate", {"expr": "1+1"})
    assert coerce_call(bare, {"calculate": calculate})[0].arguments == {"expr": "1+1"}


def test_an_optional_value_a_read_only_tool_cannot_take_gives_way_to_its_default() -> None:
    from lar.tools.builtin import file_find

    call = ToolCall("c", "file_find", {"pattern": "*.txt", "sort": "line"})
    fixed, changes = coerce_call(call, {"file_find": file_find})
    assert fixed.arguments == {"pattern": "*.txt"}
    assert changes == ['sort: "line" dropped (not a value it takes; default)']
    good = ToolCall("c", "file_find", {"pattern": "*.txt", "sort": "size"})
    assert coerce_call(good, {"file_find": file_find}) == (good, [])


def test_closest_tools_are_those_whose_words_an_invented_call_shares() -> None:
    from lar.calling.corrections import closest_tools, invented_nudge

    described = {
        "folder_list": "List a folder: each file with its size and date.",
        "file_read": "Read a text file's lines.",
        "calculate": "Work out arithmetic.",
    }
    assert closest_tools("get_file_size", ["path"], described) == ["folder_list", "file_read"]
    assert closest_tools("getFileSizes", [], described)[0] == "folder_list"
    assert closest_tools("send_email", ["to", "body"], described) == []
    nudge = invented_nudge("get_file_size", list(described), ["folder_list"])
    assert "folder_list may give what you need" in nudge
