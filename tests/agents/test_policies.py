"""Named policies (lar.agents.policy, lar.agents.policies): each one's verdicts, when it stays
quiet, how profiles and settings choose them, and that an unsure check asks rather than
refuses outside English."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lar.agents.agent import Agent
from lar.agents.policies import DEFAULT_PROFILE, fits_prompt, parse_fits
from lar.agents.policy import (
    ACCEPT,
    ChangeCalls,
    DropCalls,
    Finish,
    PolicyError,
    PolicyRegistry,
    Retry,
    RunState,
    Turn,
    WithholdTools,
    apply,
    resolve_policies,
)
from lar.calling.corrections import DESCRIBED_NUDGE
from lar.calling.relevance import Relevance, in_embedder_language
from lar.config import LarConfig
from lar.engines.scripted import ScriptedEngine
from lar.tools.base import Tool, tool
from lar.types import Code, Message, ModelResponse, Notice, ToolCall, ToolResult


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 18 C, sunny"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return "sent"


TOOLS: dict[str, Tool] = {t.name: t for t in (get_weather, send_email)}


class FixedScores(Relevance):
    """The embedder's similarities, fixed per tool, so the policies' logic is tested alone."""

    def __init__(self, scores: dict[str, float]) -> None:
        super().__init__(threshold=0.15, grounded_above=0.4)
        self.fixed = scores

    def scores(self, request: Any, tools: Sequence[tuple[str, str]]) -> dict[str, float]:
        return {name: self.fixed[name] for name, _ in tools}


class Probe(Turn):
    """A turn that also keeps what the policies asked the model (``asked``)."""

    asked: list[list[Message]]


def policy(name: str) -> Any:
    return PolicyRegistry.get(name)()


def turn(
    request: str,
    calls: Sequence[ToolCall] = (),
    *,
    text: str = "",
    scores: dict[str, float] | None = None,
    replies: Sequence[str] | None = None,
    run: RunState | None = None,
) -> Probe:
    asked: list[list[Message]] = []
    answers = list(replies or [])

    async def ask(messages: list[Message], policy: str) -> ModelResponse | None:
        asked.append(messages)
        return ModelResponse(content=answers.pop(0)) if answers else None

    t = Probe(
        run or RunState("r", max_turns=4, turn=1),
        "protocol",
        TOOLS,
        [Message("user", request)],
        text=text,
        calls=list(calls),
        relevance=FixedScores(scores or {}),
        key=lambda c: f"{c.name}{sorted(c.arguments.items())}",
        asker=ask if replies is not None else None,
    )
    t.asked = asked
    return t


def hook(name: str, method: str, t: Turn) -> Any:
    return asyncio.run(getattr(policy(name), method)(t))


WEATHER = ToolCall("c1", "get_weather", {"city": "Lisboa"})


# --- answers ------------------------------------------------------------------------------


def test_a_plain_answer_passes_every_answer_policy() -> None:
    t = turn("Tell me about Lisbon.", text="Lisbon is the capital of Portugal.")
    every = resolve_policies(None, None, "protocol", default=DEFAULT_PROFILE)
    verdict, said = asyncio.run(apply("answer", every, t))
    assert verdict is ACCEPT and said == []


def test_an_english_answer_to_a_request_in_another_language_is_asked_for_again_in_it() -> None:
    t = turn(
        "文件 yusuan.txt 有多少行？请告诉我。", text="There are 21 lines in the file yusuan.txt."
    )
    got = hook("english_answer", "before_answer", t)
    assert isinstance(got, Retry) and got.code == Code.ENGLISH_ANSWER
    assert "Write your answer in Chinese, not in English" in got.nudge
    # an answer in the request's language, or any answer to an English request, stands
    same = turn("文件 yusuan.txt 有多少行？请告诉我。", text="文件 yusuan.txt 共有 21 行。")
    assert hook("english_answer", "before_answer", same) is ACCEPT
    english = turn("How many lines does yusuan.txt have?", text="There are 21 lines in it.")
    assert hook("english_answer", "before_answer", english) is ACCEPT
    # an unsure request (too short to tell) is never judged
    short = turn("Borra ideas.md.", text="I deleted ideas.md for you.")
    assert hook("english_answer", "before_answer", short) is ACCEPT


def test_an_answer_writing_out_a_tool_name_is_corrected_once() -> None:
    t = turn("Weather?", text="I would use the get_weather tool with city Porto.")
    got = hook("described_call", "before_answer", t)
    assert isinstance(got, Retry) and got.nudge == DESCRIBED_NUDGE and "get_weather" in got.message
    # in another language too: the name is an identifier, not an English word
    t = turn("Tempo?", text="Eu chamaria get_weather para o Porto.")
    assert isinstance(hook("described_call", "before_answer", t), Retry)
    t.run.fired["described_call"] = 1  # once per run
    assert hook("described_call", "before_answer", t) is ACCEPT
    t = turn("Weather?", text="I would use the get_weather tool.", run=RunState("r", 4, 1, True))
    assert hook("described_call", "before_answer", t) is ACCEPT  # answer mode: no tools to call
    t = turn("Weather?", text="I would use the get_weather tool.", run=RunState("r", 4, 4))
    assert hook("described_call", "before_answer", t) is ACCEPT  # no turn left to correct


def test_a_plain_word_that_is_also_a_tool_name_is_not_a_described_call() -> None:
    from lar.calling.corrections import described_call

    assert described_call("I could not search for that.", ["search"]) is None
    assert described_call("Call `search` with the title.", ["search"]) == "search"
    assert described_call("search(title='x')", ["search"]) == "search"


def test_a_tool_that_already_ran_is_described_only_when_written_as_code() -> None:
    from lar.calling.corrections import described_call

    summary = "- Tidy sorts downloads.\n- It was read with the file_read function."
    assert described_call(summary, ["file_read"]) == "file_read"
    assert described_call(summary, ["file_read"], ran={"file_read"}) is None
    assert described_call("Next: file_read(path='b.md')", ["file_read"], {"file_read"}) == (
        "file_read"
    )


# --- first calls: off-topic and invented values --------------------------------------------


def test_an_english_request_far_from_the_tool_is_refused_without_asking() -> None:
    call = ToolCall("c1", "get_weather", {"city": "Kilimanjaro"})
    t = turn("How tall is Mount Kilimanjaro?", [call], scores={"get_weather": 0.05}, replies=["y"])
    got = hook("off_topic", "before_calls", t)
    assert isinstance(got, DropCalls) and isinstance(got.then, WithholdTools)
    assert got.numbers["similarity.get_weather"] == 0.05 and got.numbers["threshold"] == 0.15
    assert t.asked == []


@pytest.mark.parametrize(
    ("request_", "city"),
    [
        ("Como está o tempo em Lisboa?", "Lisboa"),
        ("¿Qué tiempo hace en Lisboa?", "Lisboa"),
        ("Quel temps fait-il à Lisbonne ?", "Lisbonne"),
        ("Wie ist das Wetter in Lissabon?", "Lissabon"),
        ("Was ist das Wetter in Berlin?", "Berlin"),
        ("里斯本的天气怎么样？", "里斯本"),
    ],
)
def test_outside_english_a_low_score_alone_refuses_nothing(request_: str, city: str) -> None:
    assert not in_embedder_language(request_)
    call = ToolCall("c1", "get_weather", {"city": city})
    t = turn(request_, [call], scores={"get_weather": 0.07}, replies=["no"])
    for name in ("off_topic", "doubted_values"):
        assert hook(name, "before_calls", t) is ACCEPT  # its values come from the request
    assert t.asked == []  # and nothing needed asking


def test_outside_english_a_value_found_nowhere_is_put_to_the_model_and_only_no_refuses() -> None:
    request = "Como está o tempo em Lisboa?"
    translated = ToolCall("c1", "get_weather", {"city": "Lisbon"})
    yes = turn(request, [translated], scores={"get_weather": 0.07}, replies=["Yes."])
    assert hook("off_topic", "before_calls", yes) is ACCEPT and yes.asked == []  # not English
    assert hook("doubted_values", "before_calls", yes) is ACCEPT
    (asked,) = yes.asked
    assert request in asked[-1].content and 'get_weather(city="Lisbon")' in asked[-1].content
    no = turn(request, [translated], scores={"get_weather": 0.07}, replies=["no"])
    got = hook("doubted_values", "before_calls", no)
    assert isinstance(got, DropCalls) and "the model says it does not fit" in got.message
    assert isinstance(got.then, WithholdTools) and got.calls == (translated,)
    for unsure in (["maybe, it depends"], []):  # an unclear reply, or no reply (did not fit)
        t = turn(request, [translated], scores={"get_weather": 0.07}, replies=unsure)
        assert hook("doubted_values", "before_calls", t) is ACCEPT


def test_text_still_invented_after_asking_is_refused_in_english() -> None:
    email = ToolCall("c1", "send_email", {"to": "friend@example.com", "body": "hello"})
    t = turn("Greet me with a hello.", [email], scores={"send_email": 0.3}, replies=["yes"])
    got = hook("ungrounded_values", "before_calls", t)
    assert isinstance(got, Retry)
    assert got.nudge.startswith('Not run: my request does not give to="friend@example.com".')
    assert hook("off_topic", "before_calls", t) is ACCEPT  # not asked yet: left to the nudge
    assert t.asked == []
    t.run.fired["ungrounded_values"] = 1
    assert hook("ungrounded_values", "before_calls", t) is ACCEPT  # once
    got = hook("off_topic", "before_calls", t)
    assert isinstance(got, DropCalls) and "text still invented after asking" in got.message
    assert hook("doubted_values", "before_calls", t) is ACCEPT  # off_topic's, not the model's
    assert t.asked == []  # an address found nowhere: no model's yes makes it the user's


@pytest.mark.parametrize(("reply", "refused"), [("No.", True), ("yes", False), ("hmm", False)])
def test_a_number_still_invented_after_asking_is_put_to_the_model_and_only_no_refuses(
    reply: str, refused: bool
) -> None:
    @tool
    def odds(favourable: int, total: int) -> str:
        """Probability of an event."""
        return ""

    call = ToolCall("c1", "odds", {"favourable": 4, "total": 52})
    t = turn("Odds of drawing a king from 52 cards?", [call], scores={"odds": 0.3},
             replies=[reply])  # fmt: skip
    t.tools = {**TOOLS, "odds": odds}
    t.run.fired["ungrounded_values"] = 1  # asked once already
    assert hook("off_topic", "before_calls", t) is ACCEPT and t.asked == []
    got = hook("doubted_values", "before_calls", t)
    assert len(t.asked) == 1  # 4 kings may be worked out: only the model's no refuses
    if refused:
        assert isinstance(got, DropCalls) and "the model says it does not fit" in got.message
    else:
        assert got is ACCEPT


def test_a_call_with_invented_values_beside_fitting_ones_waits() -> None:
    email = ToolCall("c2", "send_email", {"to": "x@example.com", "body": "<weather>"})
    weather = ToolCall("c1", "get_weather", {"city": "Lisbon"})
    scores = {"get_weather": 0.6, "send_email": 0.3}
    t = turn("Weather in Lisbon, then mail it to me", [weather, email], scores=scores)
    verdict, said = asyncio.run(apply("calls", [policy("ungrounded_values")], t))
    assert verdict is ACCEPT and [c.name for c in t.calls] == ["get_weather"]
    assert said[0].code == "deferred_call" and said[0].policy == "ungrounded_values"


def test_calls_after_a_tool_result_are_not_judged() -> None:
    run = RunState("r", 4, 2)
    run.completed["k"] = ToolResult("c0", "get_weather", "sunny")
    call = ToolCall("c1", "get_weather", {"city": "Kilimanjaro"})
    t = turn("How tall is Mount Kilimanjaro?", [call], scores={"get_weather": 0.05}, run=run)
    assert hook("off_topic", "before_calls", t) is ACCEPT


def test_the_fits_question_and_its_answers() -> None:
    asked = fits_prompt("Como está o tempo?", WEATHER, "Current weather for a city.")
    assert "any language" in asked[0].content and "Como está o tempo?" in asked[1].content
    assert parse_fits("Yes.") is True and parse_fits("**No**") is False
    assert parse_fits("Sim") is True and parse_fits("不是") is False and parse_fits("") is None


# --- the run: repeats, verdict order ----------------------------------------


def test_a_repeated_call_asks_for_the_answer_then_ends_with_its_result() -> None:
    run = RunState("r", 4, 2)
    t = turn("Weather?", [WEATHER], run=run)
    run.completed[t.key(WEATHER)] = ToolResult("c0", "get_weather", "sunny")
    assert isinstance(hook("repeated_call", "before_calls", t), WithholdTools)
    run.answer_mode = True
    got = hook("repeated_call", "before_calls", t)
    assert isinstance(got, Finish) and got.reason == "loop"
    assert got.answer == 'get_weather(city="Lisboa") returned: sunny'


def test_a_verdict_is_counted_and_said_with_its_policy() -> None:
    t = turn("Weather?", text="I would use the get_weather tool.")
    verdict, said = asyncio.run(apply("answer", [policy("described_call")], t))
    assert isinstance(verdict, Retry) and t.run.fired["described_call"] == 1
    (notice,) = said
    assert isinstance(notice, Notice) and notice.policy == "described_call"


# --- profiles and settings ------------------------------------------------------------------


def names(policies: Sequence[Any]) -> list[str]:
    return [p.name for p in policies]


def test_a_profile_and_its_edits_choose_the_policies() -> None:
    default = resolve_policies(None, None, "protocol", default=DEFAULT_PROFILE)
    native_only = {"repeated_call"}
    assert names(default) == [n for n in DEFAULT_PROFILE if n not in native_only]
    native = names(resolve_policies(None, None, "native", default=DEFAULT_PROFILE))
    assert native == [
        "invented_tool",
        "percent_scale",
        "grouped_figures",
        "reopened_skill",
        "repeated_call",
        "narrow_read",
        "patched_rename",
        "lost_text",
        "refused_call",
        "contradicted_weekday",
    ]
    profile = ["described_call", "off_topic"]
    assert names(resolve_policies(profile, None, "protocol", default=DEFAULT_PROFILE)) == profile
    edited = resolve_policies(profile, ["-off_topic", "+more_calls"], "protocol", default=())
    assert names(edited) == ["described_call", "more_calls"]
    assert names(resolve_policies(profile, [], "protocol", default=())) == []


def test_an_unknown_or_mixed_setting_is_an_error_naming_where() -> None:
    with pytest.raises(PolicyError, match=r"agent.policies: unknown policy 'of_topic'; known: "):
        resolve_policies(None, ["-of_topic"], "protocol", default=DEFAULT_PROFILE,
                         where="agent.policies")  # fmt: skip
    with pytest.raises(PolicyError, match="mix of names and"):
        resolve_policies(None, ["off_topic", "-more_calls"], "protocol", default=())


DESCRIBED = "I would use the get_weather tool for that."


def run_with(**kw: Any) -> tuple[Any, ScriptedEngine]:
    engine = ScriptedEngine([DESCRIBED, "It is sunny."])
    agent = Agent(tools=[get_weather], engine=engine, workspace=Path("."), track="protocol",
                  traces=False, **kw)  # fmt: skip
    return agent.run("Weather in Lisbon?"), engine


def test_the_agent_and_the_config_switch_policies_off() -> None:
    on, _ = run_with()
    assert on.text == "It is sunny."  # corrected once
    off, engine = run_with(policies=["-described_call"])
    assert off.text == DESCRIBED and len(engine.calls) == 1
    config = LarConfig.model_validate({"agent": {"policies": []}})
    none, _ = run_with(config=config)
    assert none.text == DESCRIBED


def test_a_bad_policy_name_in_the_config_stops_the_run_with_its_key() -> None:
    config = LarConfig.model_validate({"agent": {"policies": ["described"]}})
    with pytest.raises(PolicyError, match=r"agent.policies: unknown policy 'described'"):
        run_with(config=config)


def test_the_relevance_check_runs_once_per_set_of_calls_however_many_policies_ask() -> None:
    t = turn("Como está o tempo em Lisboa?", [WEATHER], scores={"get_weather": 0.07})
    seen: list[object] = []
    real = t.relevance.scores  # type: ignore[union-attr]

    def counted(request: Any, tools: Sequence[tuple[str, str]]) -> dict[str, float]:
        seen.append(request)
        return real(request, tools)

    t.relevance.scores = counted  # type: ignore[union-attr,method-assign]
    names = [policy("ungrounded_values"), policy("off_topic")]
    verdict, _ = asyncio.run(apply("calls", names, t))
    assert verdict is ACCEPT and len(seen) == 1
    t.calls = [ToolCall("c2", "get_weather", {"city": "Porto"})]  # other calls: judged anew
    asyncio.run(apply("calls", names, t))
    assert len(seen) == 2


def test_an_optional_value_found_nowhere_is_left_out_so_the_default_applies() -> None:
    @tool
    def read(path: str, start_line: int = 1, end_line: int | None = None, unit: str = "c") -> str:
        """Read a file."""
        return ""

    tools = {**TOOLS, "read": read}
    invented = ToolCall("c1", "read", {"path": "a.toml", "start_line": 1, "end_line": 1})
    other = ToolCall("c2", "get_weather", {"city": "Lisboa"})
    t = turn("What version does a.toml declare?", [invented, other])
    t.tools = tools
    got = hook("invented_option", "before_calls", t)
    assert isinstance(got, ChangeCalls) and "read end_line" in got.message
    fixed, same = got.calls
    assert fixed.arguments == {"path": "a.toml", "start_line": 1}  # 1 is start_line's default
    assert fixed.id == "c1" and same is other
    given = ToolCall("c1", "read", {"path": "a.toml", "end_line": 12, "unit": "x"})
    t = turn("Show a.toml up to line 12", [given])
    t.tools = tools
    got = hook("invented_option", "before_calls", t)  # 12 is in the request
    assert isinstance(got, ChangeCalls) and got.calls[0].arguments == {
        "path": "a.toml",
        "end_line": 12,
    }
    t = turn("Show a.toml up to line 12 in unit x", [given])
    t.tools = tools
    assert hook("invented_option", "before_calls", t) is ACCEPT


def test_the_loop_runs_the_call_without_its_invented_option() -> None:
    seen: list[dict[str, Any]] = []

    @tool
    def read(path: str, end_line: int | None = None) -> str:
        """Read a file."""
        seen.append({"path": path, "end_line": end_line})
        return "version = 0.3.7"

    engine = ScriptedEngine(['<tool_call>{"name": "read", "arguments": {"path": "a.toml", '
                             '"end_line": 1}}</tool_call>', "0.3.7"])  # fmt: skip
    agent = Agent(engine=engine, tools=[read], track="protocol", memory=False, traces=False)
    result = agent.run("What version does a.toml declare?")
    assert seen == [{"path": "a.toml", "end_line": None}] and result.text == "0.3.7"
    assert result.tool_calls[0].arguments == {"path": "a.toml"}
    assert any(getattr(e, "policy", "") == "invented_option" for e in result.events)
