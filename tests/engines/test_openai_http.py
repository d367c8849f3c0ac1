"""The OpenAI-compatible engine against a real loopback HTTP server."""

import asyncio
import socket

import pytest

from lar import Agent, tool
from lar.engines.failover import FailoverEngine
from lar.engines.openai_http import OpenAIEngine
from lar.errors import EngineError
from lar.testing import MockOpenAIServer, text_reply, tool_call_reply
from lar.types import Message


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def engine(url: str, **kw: object) -> OpenAIEngine:
    kw.setdefault("backoff_s", 0.0)
    return OpenAIEngine(base_url=url, model="mock", **kw)  # type: ignore[arg-type]


async def _collect(eng: OpenAIEngine) -> tuple[list[str], object]:
    texts: list[str] = []
    final = None
    try:
        async for chunk in eng.stream([Message("user", "hi")]):
            if chunk.text:
                texts.append(chunk.text)
            if chunk.response is not None:
                final = chunk.response
    finally:
        await eng.aclose()
    return texts, final


def test_generate_and_key_header() -> None:
    with MockOpenAIServer([text_reply("hello")], api_key="sk-test") as srv:
        eng = engine(srv.url, api_key="sk-test")

        async def go():  # type: ignore[no-untyped-def]
            try:
                return await eng.generate([Message("user", "hi")], temperature=0)
            finally:
                await eng.aclose()

        resp = asyncio.run(go())
    assert resp.content == "hello" and resp.usage.prompt_tokens == 10
    assert srv.requests[0]["temperature"] == 0 and srv.requests[0]["model"] == "mock"
    assert "sk-test" not in repr(eng)


def test_sse_streaming_text_and_tool_call_deltas() -> None:
    with MockOpenAIServer(
        [text_reply("streamed text here"), tool_call_reply("add", {"a": 1, "b": 2})]
    ) as srv:
        texts, final = asyncio.run(_collect(engine(srv.url)))
        assert "".join(texts) == "streamed text here" and len(texts) > 1
        assert final.content == "streamed text here"  # type: ignore[attr-defined]
        assert final.usage.completion_tokens == 5  # type: ignore[attr-defined]
        _, final2 = asyncio.run(_collect(engine(srv.url)))
    (tc,) = final2.tool_calls  # type: ignore[attr-defined]
    assert (tc.name, tc.arguments) == ("add", {"a": 1, "b": 2})
    assert srv.requests[0]["stream"] is True


def test_retries_5xx_and_429_then_succeeds() -> None:
    script = [
        (503, {"error": {"message": "busy"}}),
        (429, {"error": "slow down"}),
        text_reply("ok"),
    ]
    with MockOpenAIServer(script) as srv:
        _, final = asyncio.run(_collect(engine(srv.url, retries=2)))
    assert final.content == "ok" and len(srv.requests) == 3  # type: ignore[attr-defined]


def test_no_retry_after_4xx() -> None:
    with MockOpenAIServer([(400, {"error": {"message": "bad model"}}), text_reply("never")]) as srv:
        with pytest.raises(EngineError) as info:
            asyncio.run(_collect(engine(srv.url, retries=2)))
    assert info.value.status == 400 and not info.value.retryable
    assert "HTTP 400: bad model" in str(info.value)
    assert len(srv.requests) == 1


def test_retries_are_bounded() -> None:
    with MockOpenAIServer([(500, {"error": "x"})], repeat_last=True) as srv:
        with pytest.raises(EngineError, match="HTTP 500"):
            asyncio.run(_collect(engine(srv.url, retries=2)))
    assert len(srv.requests) == 3


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_connection_refused_is_retryable_and_named() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(EngineError) as info:
        asyncio.run(_collect(engine(url, retries=1)))
    assert info.value.retryable and f"cannot reach {url}/chat/completions" in str(info.value)


def test_malformed_response_is_not_retried() -> None:
    with MockOpenAIServer([b"this is not json", text_reply("never")]) as srv:
        eng = engine(srv.url)

        async def go() -> None:
            try:
                await eng.generate([Message("user", "x")])
            finally:
                await eng.aclose()

        with pytest.raises(EngineError, match="malformed response"):
            asyncio.run(go())
    assert len(srv.requests) == 1


def test_failover_moves_on_for_network_errors_only() -> None:
    dead = engine(f"http://127.0.0.1:{_closed_port()}/v1", retries=0, name="dead")
    with MockOpenAIServer([text_reply("from backup")]) as srv:
        fo = FailoverEngine([dead, engine(srv.url, name="backup")])

        async def go():  # type: ignore[no-untyped-def]
            try:
                return await fo.generate([Message("user", "x")])
            finally:
                await fo.aclose()

        resp = asyncio.run(go())
    assert resp.content == "from backup" and resp.source == "backup"
    assert resp.engine == "openai" and len(resp.failover) == 1 and "dead" in resp.failover[0]
    assert len(fo.failures) == 1 and "dead" in fo.failures[0]
    with (
        MockOpenAIServer([(401, {"error": "bad key"})]) as bad,
        MockOpenAIServer([text_reply("x")]) as good,
    ):
        fo2 = FailoverEngine([engine(bad.url, name="bad"), engine(good.url, name="good")])

        async def go2() -> None:
            try:
                await fo2.generate([Message("user", "x")])
            finally:
                await fo2.aclose()

        with pytest.raises(EngineError, match="HTTP 401"):
            asyncio.run(go2())
        assert good.requests == []


def test_agent_on_an_openai_endpoint_native_track() -> None:
    with MockOpenAIServer(
        [tool_call_reply("add", {"a": 1234, "b": 4321}), text_reply("5555")]
    ) as srv:
        with Agent(tools=[add], base_url=srv.url, model="mock") as agent:
            result = agent.run("What is 1234 + 4321?")
            track = agent.session().track
    assert track == "native"
    assert result.text == "5555" and [c.result for c in result.tool_calls] == [5555]
    assert srv.requests[0]["tools"][0]["function"]["name"] == "add"
    tool_msg = srv.requests[1]["messages"][-1]
    assert tool_msg == {"role": "tool", "content": "5555", "tool_call_id": "call_1"}


def test_native_track_falls_back_to_parsing_text_calls() -> None:
    text_call = '```json\n{"name": "add", "arguments": {"a": 2, "b": 2}}\n```'
    with MockOpenAIServer([text_reply(text_call), text_reply("4")]) as srv:
        with Agent(tools=[add], base_url=srv.url, model="mock") as agent:
            result = agent.run("2+2?")
    assert result.text == "4" and [c.result for c in result.tool_calls] == [4]


def test_arun_on_a_shared_loop_does_not_block_it() -> None:
    """Inside someone else's event loop, the HTTP wait happens off the loop thread."""
    import time as _time

    def slow(body: dict) -> dict:  # type: ignore[type-arg]
        _time.sleep(0.5)
        return text_reply("late answer")

    with MockOpenAIServer([slow]) as srv:
        agent = Agent(tools=[add], base_url=srv.url, model="mock")

        async def main() -> tuple[str, int]:
            ticks = 0
            done = asyncio.Event()

            async def heartbeat() -> None:
                nonlocal ticks
                while not done.is_set():
                    ticks += 1
                    await asyncio.sleep(0.01)

            beat = asyncio.create_task(heartbeat())
            result = await agent.arun("hi")
            done.set()
            await beat
            await agent.engine.aclose()
            return result.text, ticks

        text, ticks = asyncio.run(main())
    assert text == "late answer"
    assert ticks >= 10  # a blocked loop would tick once or twice in 0.5 s
