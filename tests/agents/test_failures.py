"""Typed failures (issue 17, Must show 6): an engine's error reaches the caller with its fields."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lar import Agent
from lar.engines.openai_http import OpenAIEngine
from lar.errors import EngineError
from lar.testing import MockOpenAIServer
from lar.types import ErrorEvent, event_from_json, event_to_json

UNAVAILABLE = (503, {"error": {"message": "the model is loading"}})


def _agent(url: str, tmp_path: Path) -> Agent:
    engine = OpenAIEngine(base_url=url, model="m", name="remote", retries=0, backoff_s=0)
    return Agent(engine=engine, workspace=tmp_path, traces=False)


def test_a_503_reaches_run_with_status_and_retryable(tmp_path: Path) -> None:
    with MockOpenAIServer([UNAVAILABLE]) as srv:
        agent = _agent(srv.url, tmp_path)
        with pytest.raises(EngineError) as caught:
            agent.run("hello")
        agent.close()
    err = caught.value
    assert (err.status, err.retryable, err.engine) == (503, True, "remote")
    assert isinstance(err.__cause__, EngineError) and err.__cause__.status == 503


def test_a_503_reaches_arun_and_the_error_event(tmp_path: Path) -> None:
    with MockOpenAIServer([UNAVAILABLE, UNAVAILABLE]) as srv:
        agent = _agent(srv.url, tmp_path)

        async def both() -> tuple[EngineError, list[ErrorEvent]]:
            try:
                await agent.arun("hello")
            except EngineError as exc:
                raised = exc
            events = [e async for e in agent.astream("hello") if isinstance(e, ErrorEvent)]
            await agent.engine.aclose()  # its client belongs to this event loop
            return raised, events

        raised, events = asyncio.run(both())
        agent.close()
    assert (raised.status, raised.retryable) == (503, True)
    (event,) = events
    assert (event.kind, event.status, event.retryable, event.engine) == (
        "EngineError",
        503,
        True,
        "remote",
    )
    again = event_from_json(event_to_json(event))  # the fields survive JSON (--json, traces)
    assert isinstance(again, ErrorEvent) and (again.status, again.retryable) == (503, True)
    assert again.cause is None and "cause" not in event_to_json(event)


def test_a_client_error_is_not_retryable(tmp_path: Path) -> None:
    with MockOpenAIServer([(400, {"error": {"message": "bad request"}})]) as srv:
        agent = _agent(srv.url, tmp_path)
        with pytest.raises(EngineError) as caught:
            agent.run("hello")
        agent.close()
    assert (caught.value.status, caught.value.retryable) == (400, False)
