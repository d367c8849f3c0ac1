"""The loop's one-time corrections as plain functions: which reply gets which, and when not."""

from __future__ import annotations

import json
from typing import Any

from lar.calling.corrections import (
    DESCRIBED_NUDGE,
    ECHO_NUDGE,
    Correction,
    review_answer,
    review_first_calls,
)
from lar.calling.relevance import OffTopic, Relevance
from lar.types import ToolCall

ERROR = json.dumps({"error": "not found", "detail": "no city named Atlantis"})


def review(answer: str, **over: Any) -> Correction | str:
    kw: dict[str, Any] = {
        "tools": ["get_weather", "add"],
        "results": [],
        "errors": [],
        "nudged": set(),
        "protocol": True,
        "answer_mode": False,
        "last_turn": False,
    }
    return review_answer(answer, **(kw | over))


def test_a_plain_answer_is_taken_as_it_is() -> None:
    assert review("It is sunny in Porto.") == "It is sunny in Porto."


def test_an_answer_describing_a_call_is_corrected_once_on_the_protocol_track() -> None:
    said = "I would use the get_weather tool with city Porto."
    got = review(said)
    assert isinstance(got, Correction) and got.kind == "described"
    assert got.code == "described_call" and got.nudge == DESCRIBED_NUDGE
    assert "get_weather" in got.message
    assert review(said, nudged={"described"}) == said  # once per run
    assert review(said, protocol=False) == said  # native calls are structured
    assert review(said, answer_mode=True) == said  # no tools to call
    assert review(said, last_turn=True) == said  # no turn left to correct


def test_an_answer_that_copies_a_result_is_corrected_once() -> None:
    result = "temperature 21 C, sky clear, wind 5 km/h"
    got = review(f"  {result} ", results=[result])
    assert isinstance(got, Correction) and got.kind == "echo" and got.nudge == ECHO_NUDGE
    assert review(result, results=[result], nudged={"echo"}) == result
    assert review("21", results=["21"]) == "21"  # too short to call a copy


def test_a_repeated_error_is_corrected_once_then_said_in_words() -> None:
    errors = [("get_weather", ERROR)]
    got = review(ERROR, errors=errors)
    assert isinstance(got, Correction) and got.kind == "error" and got.code == "echoed_error"
    assert "The call to get_weather failed (not found: no city named Atlantis)" in got.nudge
    again = review(ERROR, errors=errors, nudged={"error"})
    assert again == (
        "I could not answer: the get_weather tool failed (not found: no city named Atlantis)."
    )
    assert review("Atlantis is a myth.", errors=errors) == "Atlantis is a myth."


def calls(*names: str) -> list[ToolCall]:
    return [ToolCall(f"c{i}", n, {"to": "bob@example.com"}) for i, n in enumerate(names)]


REL = Relevance(threshold=0.15, grounded_above=0.4)


def test_first_calls_that_all_fit_all_run() -> None:
    run, said = review_first_calls(calls("a", "b"), [None, None], REL, set())
    assert [c.name for c in run] == ["a", "b"] and said is None


def test_a_call_judged_beside_fitting_ones_waits_and_the_rest_run() -> None:
    run, said = review_first_calls(calls("a", "b"), [None, OffTopic(0.3, ("to",))], REL, set())
    assert [c.name for c in run] == ["a"]
    assert said is not None and said.code == "deferred_call" and said.kind == ""
    assert "b 0.30, to not in the conversation" in said.message and not said.answer_mode


def test_invented_values_are_asked_for_once_then_answer_mode() -> None:
    verdicts = [OffTopic(0.3, ("to",))]
    run, said = review_first_calls(calls("send_email"), verdicts, REL, set())
    assert run == [] and said is not None and said.kind == "ungrounded"
    assert said.nudge.startswith('Not run: my request does not give to="bob@example.com".')
    run, said = review_first_calls(calls("send_email"), verdicts, REL, {"ungrounded"})
    assert run == [] and said is not None and said.code == "off_topic_call"
    assert said.answer_mode and said.nudge == ""
    assert "threshold 0.15, values checked under 0.40" in said.message


def test_an_unrelated_call_gets_answer_mode_at_once() -> None:
    run, said = review_first_calls(calls("add"), [OffTopic(0.04)], REL, set())
    assert run == [] and said is not None and said.code == "off_topic_call"
    assert said.answer_mode and "similarity add 0.04" in said.message
