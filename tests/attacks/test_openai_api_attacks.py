"""Malformed requests to the OpenAI-compatible endpoint: each is a 400 that names the field at
fault, never a 500 with a traceback, and the model is never called."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio

BAD_ASSISTANT_MESSAGES: list[Any] = [
    {"role": "assistant", "content": "", "tool_calls": "shell"},
    {"role": "assistant", "content": "", "tool_calls": [1]},
    {"role": "assistant", "content": "", "tool_calls": [{}]},
    {"role": "assistant", "content": "", "tool_calls": [{"function": "shell"}]},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": 7}}]},
    {"role": "assistant", "tool_calls": [{"id": 3, "function": {"name": "shell"}}]},
    {"role": "assistant", "tool_calls": [{"function": {"name": "shell", "arguments": "{x"}}]},
    {"role": "tool", "content": "out", "tool_call_id": {"a": 1}},
]


@pytest.mark.parametrize("bad", BAD_ASSISTANT_MESSAGES)
async def test_a_malformed_earlier_message_is_a_400_naming_it(make_client: Any, bad: Any) -> None:
    client, hub, engine = await make_client(["never"])
    messages = [{"role": "user", "content": "hi"}, bad, {"role": "user", "content": "again"}]
    r = await client.post("/v1/chat/completions", json={"messages": messages})
    assert r.status_code == 400, r.text
    message = r.json()["error"]["message"]
    assert message.startswith("messages[1]"), message
    assert "Traceback" not in r.text
    assert engine.calls == []


async def test_a_well_formed_tool_call_history_is_accepted(make_client: Any) -> None:
    client, hub, engine = await make_client(["fine"])
    messages = [
        {"role": "user", "content": "what is 2+2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "function": {"name": "calculate", "arguments": '{"expression":"2+2"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "4"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "thanks"},
    ]
    r = await client.post("/v1/chat/completions", json={"messages": messages})
    assert r.status_code == 200, r.text
