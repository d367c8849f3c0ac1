"""The off-topic check's scorer, with the real embedder (all-MiniLM-L6-v2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lar.calling.relevance import OFF_TOPIC_BELOW, Relevance, tool_text
from lar.errors import LarError
from lar.evals.offtopic import load_dev, split_scores
from lar.memory.embed import MiniLMEmbedder
from lar.tools.base import SchemaTool
from lar.tools.builtin import builtin_tools


@pytest.fixture(scope="module")
def rel() -> Relevance:
    return Relevance(MiniLMEmbedder())


def narrow(name: str, description: str) -> SchemaTool:
    return SchemaTool(name, description, {"type": "object", "properties": {}}, lambda: None)


WEATHER = narrow("get_weather", "Current weather for a city.")
TIMER = narrow("set_timer", "Start a countdown timer.")


def test_a_tool_that_fits_scores_far_above_one_that_does_not(rel: Relevance) -> None:
    scores = rel.scores(
        "Is it raining in Lisbon right now?",
        [(WEATHER.name, WEATHER.description), (TIMER.name, TIMER.description)],
    )
    assert scores["get_weather"] >= 0.3 > OFF_TOPIC_BELOW
    assert scores["set_timer"] < OFF_TOPIC_BELOW


def test_calls_only_to_unrelated_narrow_tools_are_off_topic(rel: Relevance) -> None:
    off = rel.off_topic(["What is the capital of France?"], [TIMER])
    assert off is not None and set(off) == {"set_timer"}
    assert rel.off_topic(["Start a 5 minute timer for the pasta."], [TIMER]) is None
    # one fitting call among the calls is enough to run them
    assert rel.off_topic(["Weather in Oslo?"], [TIMER, WEATHER]) is None


def test_a_follow_up_is_judged_with_the_message_before_it(rel: Relevance) -> None:
    assert rel.off_topic(["And in Faro?"], [WEATHER]) is not None  # alone: unrelated
    assert rel.off_topic(["And in Faro?", "Weather in Porto?"], [WEATHER]) is None


def test_broad_tools_are_never_judged(rel: Relevance) -> None:
    shell = next(t for t in builtin_tools() if t.name == "shell")
    assert shell.broad and all(t.broad for t in builtin_tools())
    # the shell's description shares nothing with the request, yet the shell is what fits
    assert (
        rel.scores("Which git branch am I on?", [(shell.name, shell.description)])["shell"]
        < OFF_TOPIC_BELOW
    )
    assert rel.off_topic(["Which git branch am I on?"], [shell]) is None


def test_without_an_embedder_nothing_is_judged() -> None:
    loads: list[int] = []

    def load() -> None:
        loads.append(1)

    rel = Relevance(load=load)
    assert rel.off_topic(["What is the capital of France?"], [TIMER]) is None
    assert rel.off_topic(["Tell me a joke"], [TIMER]) is None
    assert loads == [1]  # tried once, then off


def test_the_embedder_is_loaded_on_first_use_only(rel: Relevance) -> None:
    loads: list[int] = []

    def load() -> MiniLMEmbedder:
        loads.append(1)
        assert rel.embedder is not None
        return rel.embedder  # type: ignore[return-value]

    lazy = Relevance(load=load)
    assert loads == []
    assert lazy.off_topic([""], [TIMER]) is None and loads == []  # nothing to judge
    assert lazy.off_topic(["What is the capital of France?"], [TIMER]) is not None
    assert loads == [1]


def test_the_first_paragraph_of_a_description_is_compared() -> None:
    assert tool_text("x", "Run code.\n\nPython runs\nlike a notebook.") == "Run code."
    assert tool_text("set_timer", "  ") == "set timer"


def test_the_threshold_is_what_the_dev_set_supports(rel: Relevance) -> None:
    """bench/relevance.py's rule, checked: no fitting narrow pair of the dev set falls below."""
    fitting, unrelated = split_scores(rel, load_dev())
    assert len(fitting) >= 30 and len(unrelated) >= 30
    assert OFF_TOPIC_BELOW <= min(fitting) < OFF_TOPIC_BELOW + 0.05


def test_a_dev_line_without_its_fields_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "dev.jsonl"
    bad.write_text('# pairs\n{"request": "x", "tools": [], "fits": null}\n{"request": "y"}\n')
    with pytest.raises(LarError, match=rf"^{bad}:3: needs request, tools"):
        load_dev(bad)
