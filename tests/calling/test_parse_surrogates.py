"""Lone surrogates never reach a parsed call's arguments (they cannot be stored as UTF-8)."""

from __future__ import annotations

import json

from lar.calling.protocol import parse


def test_an_escaped_lone_surrogate_in_arguments_becomes_a_replacement_character() -> None:
    # Found by the fuzz test: JSON's "\udfff" escape decodes to a character UTF-8 cannot hold.
    text = '<tool_call>{"name": "add", "arguments": {"a\\udfff": 1, "b": "x\\ud800",}}</tool_call>'
    [call] = parse(text, {"add": ["a", "b"]}).calls
    shown = json.dumps(call.arguments, ensure_ascii=False)
    shown.encode("utf-8")  # raised UnicodeEncodeError before
    assert "\ufffd" in shown
