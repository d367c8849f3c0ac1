"""Repair never raises on model output (found by `lar eval`: a "set" of call objects)."""

from lar.calling.protocol import parse
from lar.repair import load_json


def test_a_python_set_of_dicts_does_not_crash_the_parser() -> None:
    text = '{{"name": "get_weather", "arguments": {"city": "Porto"}}, {"name": "get_weather", "arguments": {"city": "Faro"}}}'  # noqa: E501
    value, _ = load_json(text)  # must not raise TypeError (unhashable dict)
    assert value is None or isinstance(value, dict | list)
    parse(text, {"get_weather": {"city"}})  # no exception: calls or plain text
