"""Repair never raises on model output (found by `lar eval`: a "set" of call objects)."""

from lar.calling.protocol import parse
from lar.repair import load_json


def test_a_python_set_of_dicts_does_not_crash_the_parser() -> None:
    text = '{{"name": "get_weather", "arguments": {"city": "Porto"}}, {"name": "get_weather", "arguments": {"city": "Faro"}}}'  # noqa: E501
    value, _ = load_json(text)  # must not raise TypeError (unhashable dict)
    assert value is None or isinstance(value, dict | list)
    parse(text, {"get_weather": {"city"}})  # no exception: calls or plain text


def test_json_repair_is_given_a_bounded_share_of_deeply_nested_text(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """json-repair's time grows with length times nesting: many open braces before a long run
    of text took 2.5 s CPU a reply (found by the parser fuzz). Its work per reply is bounded in
    that product, and a real broken call is still repaired."""
    import json_repair

    from lar.calling.protocol import REPAIR_BUDGET
    from lar.repair import REPAIR_MAX_COST, nesting

    given: list[str] = []
    real = json_repair.loads

    def spy(text: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        given.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(json_repair, "loads", spy)
    for depth in (8, 51, 200):
        given.clear()
        parse("x" * 900 + "{" * depth + "x" * 800, {"add": ["a", "b"]})
        assert sum(len(t) * max(1, nesting(t)) for t in given) <= REPAIR_BUDGET
        assert all(len(t) * max(1, nesting(t)) <= REPAIR_MAX_COST for t in given)
    given.clear()
    broken = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2,}</tool_call>'
    [call] = parse(broken, {"add": ["a", "b"]}).calls
    assert call.arguments == {"a": 1, "b": 2}
