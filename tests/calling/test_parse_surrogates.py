"""Lone surrogates never reach a parsed call's arguments (they cannot be stored as UTF-8)."""

from __future__ import annotations

import json

from lar.calling.protocol import parse
from lar.repair import decode_arguments


def test_an_escaped_lone_surrogate_in_arguments_becomes_a_replacement_character() -> None:
    # Found by the fuzz test: JSON's "\udfff" escape decodes to a character UTF-8 cannot hold.
    text = '<tool_call>{"name": "add", "arguments": {"a\\udfff": 1, "b": "x\\ud800",}}</tool_call>'
    [call] = parse(text, {"add": ["a", "b"]}).calls
    shown = json.dumps(call.arguments, ensure_ascii=False)
    shown.encode("utf-8")  # raised UnicodeEncodeError before
    assert "\ufffd" in shown


def test_a_native_calls_arguments_lose_their_lone_surrogates_too() -> None:
    # The engines decode native tool-call arguments with the same helper.
    arguments, _ = decode_arguments('{"path": "notes\\udc80.txt", "tags": ["\\ud83d"]}')
    assert arguments == {"path": "notes\ufffd.txt", "tags": ["\ufffd"]}
    json.dumps(arguments, ensure_ascii=False).encode("utf-8")
