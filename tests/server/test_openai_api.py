"""The OpenAI-compatible API on a scripted engine: answers, streams, history, models, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.server.conftest import call

pytestmark = pytest.mark.anyio


def _sse(text: str) -> list[Any]:
    out: list[Any] = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                data = line[6:]
                out.append(data if data == "[DONE]" else json.loads(data))
    return out


async def test_a_tool_using_answer_with_its_tool_activity_and_usage(make_client: Any) -> None:
    client, hub, engine = await make_client([call("calculate", expression="17*23"), "It is 391."])
    r = await client.post(
        "/v1/chat/completions",
        json={"model": "lar", "messages": [{"role": "user", "content": "What is 17*23?"}]},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    content = body["choices"][0]["message"]["content"]
    assert content.endswith("It is 391.")
    assert "> ⚙ calculate" in content and "> ✓ calculate: 17*23 = 391" in content
    assert body["choices"][0]["finish_reason"] == "stop"
    assert (
        body["usage"]["total_tokens"]
        == (body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"])
        > 0
    )
    run = r.headers["x-lar-run"]
    assert body["lar"]["run"] == run
    # the same run, in full, on Lar's own API
    detail = (await client.get(f"/api/runs/{run}")).json()
    kinds = [e["type"] for e in detail["events"]]
    assert {"run_started", "tool_call", "tool_result", "final"} <= set(kinds)


async def test_the_clients_history_and_system_message_are_honoured(make_client: Any) -> None:
    client, hub, engine = await make_client(["Blue, as you said."])
    messages = [
        {"role": "system", "content": "You answer in one short sentence."},
        {"role": "user", "content": "My favourite colour is blue."},
        {"role": "assistant", "content": "> ⚙ notes {}\n> ✓ notes: ok\n\nNoted."},
        {"role": "user", "content": [{"type": "text", "text": "Which colour do I like?"}]},
    ]
    r = await client.post("/v1/chat/completions", json={"model": "lar", "messages": messages})
    assert r.status_code == 200, r.text
    sent = engine.calls[0]
    assert sent[0].role == "system" and "You answer in one short sentence." in sent[0].content
    said = [(m.role, m.content) for m in sent[1:]]
    assert ("user", "My favourite colour is blue.") in said
    assert ("assistant", "Noted.") in said  # its tool-activity lines are not history
    assert said[-1][0] == "user" and said[-1][1].startswith("Which colour do I like?")


async def test_streaming_chunks_end_with_usage_and_done(make_client: Any) -> None:
    client, hub, engine = await make_client([call("calculate", expression="2+2"), "Four."])
    r = await client.post(
        "/v1/chat/completions",
        json={
            "model": "lar/default",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "2+2?"}],
        },
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    chunks = _sse(r.text)
    assert chunks[-1] == "[DONE]"
    assert all(c["object"] == "chat.completion.chunk" for c in chunks[:-1])
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-2])
    assert "> ⚙ calculate" in text and text.rstrip().endswith("Four.")
    finish = [c["choices"][0]["finish_reason"] for c in chunks[:-1] if c["choices"]]
    assert finish[-1] == "stop"
    usage = chunks[-2]
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] > 0


async def test_tool_activity_can_be_left_out(make_client: Any) -> None:
    client, hub, engine = await make_client([call("calculate", expression="2+2"), "Four."])
    r = await client.post(
        "/v1/chat/completions",
        headers={"X-Lar-Tool-Activity": "off"},
        json={"messages": [{"role": "user", "content": "2+2?"}]},
    )
    assert r.json()["choices"][0]["message"]["content"] == "Four."


async def test_models_lists_the_agent_under_each_configured_model(make_client: Any) -> None:
    config = "models:\n  - name: small\n    engine: openai\n    base_url: http://127.0.0.1:9/v1\n"
    client, hub, engine = await make_client([], config_text=config)
    r = await client.get("/v1/models")
    ids = [m["id"] for m in r.json()["data"]]
    assert ids == ["lar", "lar/default", "lar/small"]
    bad = await client.post(
        "/v1/chat/completions",
        json={"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert bad.status_code == 404
    assert "gpt-4" in bad.json()["error"]["message"]


@pytest.mark.parametrize(
    "messages, says",
    [
        ([], "must not be empty"),
        ([{"role": "assistant", "content": "hi"}], "last message must be the user's"),
        ([{"role": "robot", "content": "hi"}], "messages[0].role"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            "'image_url' is not supported",
        ),
    ],
)
async def test_bad_messages_are_refused_saying_why(
    make_client: Any, messages: list[Any], says: str
) -> None:
    client, hub, engine = await make_client([])
    r = await client.post("/v1/chat/completions", json={"messages": messages})
    assert r.status_code == 400
    assert says in r.json()["error"]["message"]
    assert engine.calls == []


async def test_a_session_id_ties_requests_to_one_session(make_client: Any) -> None:
    client, hub, engine = await make_client(["One.", "Two."])
    for text in ("first", "second"):
        r = await client.post(
            "/v1/chat/completions",
            json={"user": "alice", "messages": [{"role": "user", "content": text}]},
        )
        assert r.headers["x-lar-session"] == "alice"
    runs = (await client.get("/api/runs")).json()["runs"]
    assert [r["session"] for r in runs[:2]] == ["alice", "alice"]
