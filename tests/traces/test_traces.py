"""Every run is a trace (O4) with telemetry per inference (O1); the router runs on every
request (L2) and failover is recorded (E4)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _servers import ServerProcess, named_reply

from lar import Agent, tool
from lar.config import load_config
from lar.engines.scripted import ScriptedEngine
from lar.errors import EngineError
from lar.telemetry.energy import EnergyCollector, EnergyReading
from lar.telemetry.records import ESTIMATE_METHOD, TOKEN_METHOD, EnergyMeter
from lar.testing import MockOpenAIServer
from lar.traces import TraceStore
from lar.types import ModelCalled, ModelResponse, Notice, Routed, Usage


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _sha(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_run_is_a_trace_with_steps_hashes_and_telemetry(lar_home: Path) -> None:
    engine = ScriptedEngine(
        [
            ModelResponse('{"name": "add", "arguments": {"a": 2, "b": 3}}', usage=Usage(50, 12)),
            ModelResponse("The sum is 5.", usage=Usage(70, 6)),
        ]
    )
    with Agent(tools=[add], engine=engine) as agent:
        result = agent.run("What is 2 + 3?")
        assert result.run_id.startswith("t_")
        agent.feedback(result.run_id, 1, "right answer")
    store = TraceStore(lar_home / "lar.db")
    t = store.get(result.run_id)
    assert [s.kind for s in t.steps] == ["route", "model", "tool", "model", "final"]
    route, _, call, _, _ = t.steps
    assert route.detail["router"] == "fixed" and route.detail["class"] == "math"
    assert call.name == "add" and call.ok is True
    assert call.input_hash == _sha({"a": 2, "b": 3}) and call.output_hash == _sha("5")
    assert (t.outcome, t.success, t.turns) == ("answer", True, 2)
    assert (t.prompt_tokens, t.completion_tokens) == (120, 18)
    assert t.reward is not None and 0.0 < t.reward <= 1.0
    assert (t.feedback, t.feedback_comment) == (1, "right answer")
    assert [(r.turn, r.prompt_tokens, r.token_method) for r in t.telemetry] == [
        (1, 50, TOKEN_METHOD),
        (2, 70, TOKEN_METHOD),
    ]
    assert all(r.energy_j is None for r in t.telemetry)  # no collector on this machine/test
    assert t.answer == "The sum is 5."
    store.close()


def test_usage_less_engine_is_estimated_and_labelled(lar_home: Path) -> None:
    engine = ScriptedEngine([ModelResponse("x" * 35, usage=Usage(0, 0))])
    with Agent(engine=engine) as agent:
        events = list(agent.stream("hello"))
    run_id = next(e for e in events if isinstance(e, Routed)) and agent_run_id(events)
    store = TraceStore(lar_home / "lar.db")
    (record,) = store.get(run_id).telemetry
    assert record.token_method == ESTIMATE_METHOD and record.completion_tokens == 10
    store.close()


def agent_run_id(events: list[Any]) -> str:
    from lar.types import RunStarted

    return next(e.run_id for e in events if isinstance(e, RunStarted))


def test_an_interrupted_run_still_leaves_a_trace(lar_home: Path) -> None:
    with Agent(engine=ScriptedEngine(["never read"])) as agent:
        stream = agent.stream("hi")
        first = next(stream)
        stream.close()  # the consumer walks away (Ctrl-C in the CLI)
    store = TraceStore(lar_home / "lar.db")
    assert store.get(first.run_id).outcome == "interrupted"  # type: ignore[union-attr]
    store.close()


def test_traces_false_writes_nothing(lar_home: Path) -> None:
    with Agent(engine=ScriptedEngine(["ok"]), traces=False) as agent:
        agent.run("hi")
        with pytest.raises(Exception, match="keeps no traces"):
            agent.feedback("t_x", 1)
    assert not (lar_home / "lar.db").exists()


class FakeCollector(EnergyCollector):
    name = "fake"

    def __init__(self, joules: float, fail: bool = False) -> None:
        self.joules = joules
        self.fail = fail

    def available(self) -> bool:
        return True

    def start(self) -> Any:
        if self.fail:
            raise OSError("counter vanished")
        return 0

    def stop(self, token: Any) -> EnergyReading | None:
        return EnergyReading(self.name, self.joules, 0.5)


def test_energy_is_measured_per_call_and_a_broken_collector_never_fails_a_run(
    lar_home: Path,
) -> None:
    engine = ScriptedEngine(["one", "two"])
    with Agent(engine=engine) as agent:
        agent.settings.meter = EnergyMeter([FakeCollector(2.5)])
        first = agent.run("hi")
        broken = EnergyMeter([FakeCollector(1.0, fail=True)])
        agent.settings.meter = broken
        second = agent.run("hi again")
    (called,) = [e for e in first.events if isinstance(e, ModelCalled)]
    assert called.energy_j == pytest.approx(2.5) and called.power_w is not None
    (called,) = [e for e in second.events if isinstance(e, ModelCalled)]
    assert called.energy_j is None and second.text == "two" and broken.collectors == []
    store = TraceStore(lar_home / "lar.db")
    assert store.get(first.run_id).energy_j == pytest.approx(2.5)
    assert store.get(first.run_id).telemetry[0].energy_j == pytest.approx(2.5)
    store.close()


def test_the_router_picks_the_model_on_every_request(
    lar_home: Path, two_models: tuple[MockOpenAIServer, MockOpenAIServer]
) -> None:
    small, coder = two_models
    with Agent(config=load_config()) as agent:
        trivial = agent.run("hi")
        code = agent.run("Write a Python function that reverses a list.")
    assert trivial.text == "Hello!" and code.text == "def f(): pass"
    assert (len(small.requests), len(coder.requests)) == (1, 1)
    store = TraceStore(lar_home / "lar.db")
    t1, t2 = store.get(trivial.run_id), store.get(code.run_id)
    assert (t1.model, t1.router, t1.rule) == ("small", "heuristic", "simple")
    assert t1.reason == "complexity 0.00 < 0.2: smallest (0.5B)"
    assert (t2.model, t2.rule) == ("coder", "code")
    assert t2.reason == "code in the query: model tagged code (1.5B)"
    # prices come from the catalog (config override): 40·0.1 + 8·0.2 per million
    assert t1.cost_usd == pytest.approx((40 * 0.1 + 8 * 0.2) / 1e6)
    assert t2.cost_usd == 0.0
    assert t1.telemetry[0].model == "small-0.5b"
    store.close()


def test_an_explicit_model_is_not_routed(
    lar_home: Path, two_models: tuple[MockOpenAIServer, MockOpenAIServer]
) -> None:
    small, coder = two_models
    with Agent(config=load_config(), model="small") as agent:
        result = agent.run("Write a Python function that reverses a list.")
    assert len(small.requests) == 1 and not coder.requests
    routed = next(e for e in result.events if isinstance(e, Routed))
    assert (routed.router, routed.model) == ("fixed", "small")


def test_urgency_sends_even_code_to_the_smallest(
    lar_home: Path, two_models: tuple[MockOpenAIServer, MockOpenAIServer]
) -> None:
    small, _ = two_models
    with Agent(config=load_config()) as agent:
        agent.run("Write a Python function that reverses a list.", urgency=0.9)
    assert len(small.requests) == 1


def test_a_cloud_model_is_only_routed_to_when_allowed(lar_home: Path) -> None:
    body = (
        "model: local\n"
        "models:\n"
        "  - {name: local, engine: openai, base_url: 'http://127.0.0.1:9/v1',"
        " catalog: {params_b: 1.5}}\n"
        "  - {name: cloud, engine: openai, base_url: 'https://api.example.com/v1',"
        " catalog: {params_b: 400}}\n"
    )
    (lar_home / "config.yaml").write_text(body)
    with Agent(config=load_config()) as agent:
        d = agent.route("What is 1234 * 5678?")  # math → largest
    assert d.model == "local"
    (lar_home / "config.yaml").write_text(body + "router: {allow_cloud: true}\n")
    with Agent(config=load_config()) as agent:
        assert agent.route("What is 1234 * 5678?").model == "cloud"


def test_killing_the_primary_mid_session_fails_over_and_the_trace_says_so(
    lar_home: Path, server_process: type[ServerProcess]
) -> None:
    primary = server_process("primary-model")
    backup = MockOpenAIServer([named_reply("backup-model", "backup answers")], repeat_last=True)
    backup.start()
    (lar_home / "config.yaml").write_text(
        "model: primary\nfallbacks: [backup]\nmodels:\n"
        f"  - {{name: primary, engine: openai, base_url: '{primary.url}', retries: 0}}\n"
        f"  - {{name: backup, engine: openai, base_url: '{backup.url}'}}\n"
    )
    with Agent(config=load_config()) as agent:
        first = agent.run("hi")
        primary.kill()
        second = agent.run("hi again")
    backup.stop()
    assert first.text == "primary says hi" and second.text == "backup answers"
    assert len(backup.requests) == 1
    notice = next(e for e in second.events if isinstance(e, Notice) and e.code == "failover")
    assert "answered by backup-model after" in notice.message
    store = TraceStore(lar_home / "lar.db")
    t1, t2 = store.get(first.run_id), store.get(second.run_id)
    assert t1.success and t1.answered_by == "primary-model"
    assert (t2.model, t2.answered_by, t2.success) == ("primary", "backup-model", False)
    model_step = next(s for s in t2.steps if s.kind == "model")
    assert model_step.name == "backup-model" and "primary" in model_step.detail["failover"][0]
    assert any(s.kind == "notice" and s.name == "failover" for s in t2.steps)
    store.close()


def test_a_4xx_is_never_retried_nor_failed_over(lar_home: Path) -> None:
    primary = MockOpenAIServer([(400, {"error": {"message": "bad request: no such model"}})])
    backup = MockOpenAIServer([named_reply("backup-model", "backup answers")], repeat_last=True)
    primary.start()
    backup.start()
    (lar_home / "config.yaml").write_text(
        "model: primary\nfallbacks: [backup]\nmodels:\n"
        f"  - {{name: primary, engine: openai, base_url: '{primary.url}', retries: 2}}\n"
        f"  - {{name: backup, engine: openai, base_url: '{backup.url}'}}\n"
    )
    with Agent(config=load_config()) as agent, pytest.raises(EngineError, match="400"):
        agent.run("hi")
    primary.stop()
    backup.stop()
    assert len(primary.requests) == 1 and backup.requests == []
    store = TraceStore(lar_home / "lar.db")
    (t,) = store.recent()
    assert t.outcome == "error" and not t.success and "400" in (t.error or "")
    store.close()


def test_secrets_never_reach_the_trace(lar_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c"
    monkeypatch.setenv("SHOP_API_KEY", secret)
    engine = ScriptedEngine(
        [
            ModelResponse(f'{{"name": "add", "arguments": {{"a": 1, "b": 2}}}} {secret}'),
            # "1 and 2": asked once for more calls, the model repeats its call and the secret
            ModelResponse(f'{{"name": "add", "arguments": {{"a": 1, "b": 2}}}} {secret}'),
            ModelResponse(f"Done; your key {secret} is safe."),
        ]
    )
    with Agent(tools=[add], engine=engine, config=load_config()) as agent:
        result = agent.run(f"Add 1 and 2, my key is {secret}")
    store = TraceStore(lar_home / "lar.db")
    t = store.get(result.run_id)
    assert secret not in t.query and secret not in (t.answer or "")
    store.close()
    raw = b"".join(p.read_bytes() for p in lar_home.glob("lar.db*"))
    assert secret.encode() not in raw


@tool(permission="confirm")
def send_mail(to: str) -> str:
    """Send a mail."""
    return "sent"


@tool
def weather(city: str) -> str:
    """Weather of a city."""
    raise ConnectionError("no network")


@pytest.mark.parametrize(
    ("tools", "steps", "outcome"),
    [
        ([add], ['{"name": "add", "arguments": {"a": 2, "b": 3}}', "5."], "answer"),
        (
            [send_mail],
            ['{"name": "send_mail", "arguments": {"to": "bo"}}', "Sent!"],
            "answer_after_failure",
        ),
        (
            [weather],
            # asked once (figures_without_data), the model gives its figures again
            [
                '{"name": "weather", "arguments": {"city": "Lisbon"}}',
                "Sunny, 25 C.",
                "Sunny, 25 C.",
            ],
            "leaked",
        ),
    ],
)
def test_the_outcome_tells_a_plain_answer_from_one_after_a_refusal_or_repair(
    lar_home: Path, tools: list[Any], steps: list[str], outcome: str
) -> None:
    with Agent(tools=tools, engine=ScriptedEngine(steps), approver=lambda c, t: False) as agent:
        result = agent.run("Please do it for Lisbon with 2 plus 3 for bo")
    t = TraceStore(lar_home / "lar.db").get(result.run_id)
    assert t is not None and t.outcome == outcome
    assert t.success is (outcome == "answer")  # only a plain answer teaches the router
