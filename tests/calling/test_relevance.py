"""The off-topic check's scorer, with the real embedder (all-MiniLM-L6-v2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lar.calling.relevance import (
    GROUNDED_ABOVE,
    OFF_TOPIC_BELOW,
    Relevance,
    placeholders,
    tool_text,
    ungrounded,
)
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
    off = rel.off_topic(["Who painted the Mona Lisa?"], [(TIMER, {})])
    assert off is not None and set(off) == {"set_timer"}
    assert rel.off_topic(["Start a 5 minute timer for the pasta."], [(TIMER, {})]) is None
    # one fitting call among the calls is enough to run them
    assert rel.off_topic(["Weather in Oslo?"], [(TIMER, {}), (WEATHER, {})]) is None


def test_a_follow_up_is_judged_with_the_message_before_it(rel: Relevance) -> None:
    assert rel.off_topic(["And in Faro?"], [(WEATHER, {})]) is not None  # alone: unrelated
    assert rel.off_topic(["And in Faro?", "Weather in Porto?"], [(WEATHER, {})]) is None


def test_broad_tools_are_never_judged(rel: Relevance) -> None:
    shell = next(t for t in builtin_tools() if t.name == "shell")
    assert shell.broad and all(t.broad for t in builtin_tools())
    # the shell's description shares nothing with the request, yet the shell is what fits
    assert (
        rel.scores("Which git branch am I on?", [(shell.name, shell.description)])["shell"]
        < OFF_TOPIC_BELOW
    )
    assert rel.off_topic(["Which git branch am I on?"], [(shell, {})]) is None


def test_without_an_embedder_nothing_is_judged() -> None:
    loads: list[int] = []

    def load() -> None:
        loads.append(1)

    rel = Relevance(load=load)
    assert rel.off_topic(["Who painted the Mona Lisa?"], [(TIMER, {})]) is None
    assert rel.off_topic(["Tell me a joke"], [(TIMER, {})]) is None
    assert loads == [1]  # tried once, then off


def test_the_embedder_is_loaded_on_first_use_only(rel: Relevance) -> None:
    loads: list[int] = []

    def load() -> MiniLMEmbedder:
        loads.append(1)
        assert rel.embedder is not None
        return rel.embedder  # type: ignore[return-value]

    lazy = Relevance(load=load)
    assert loads == []
    assert lazy.off_topic([""], [(TIMER, {})]) is None and loads == []  # nothing to judge
    assert lazy.off_topic(["Who painted the Mona Lisa?"], [(TIMER, {})]) is not None
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


def schema_tool(
    name: str, description: str, props: dict[str, object], required: list[str]
) -> SchemaTool:
    schema = {"type": "object", "properties": props, "required": required}
    return SchemaTool(name, description, schema, lambda **_: None)


S, N = {"type": "string"}, {"type": "number"}
EMAIL = schema_tool("send_email", "Send an email.", {"to": S, "subject": S, "body": S}, ["to"])
CURRENCY = schema_tool(
    "convert_currency",
    "Convert an amount of money between currencies (ISO codes).",
    {"amount": N, "from_currency": S, "to_currency": {"type": "string", "enum": ["EUR", "USD"]}},
    ["amount", "from_currency", "to_currency"],
)


def test_a_value_the_conversation_does_not_hold_is_ungrounded() -> None:
    args = {"amount": 100, "from_currency": "USD", "to_currency": "USD"}
    # the enum is not judged; the amount and the source currency were made up
    assert ungrounded(CURRENCY, args, "What was the total of my order 5521, in euros?") == [
        "amount",
        "from_currency",
    ]
    # digits (with a thousands comma), number words and a dozen count as given
    for said in ("Convert 1,000 dollars, USD", "a thousand USD", "100 usd please"):
        amount = 100 if "100 " in said else 1000
        assert ungrounded(CURRENCY, {**args, "amount": amount}, said) == [], said
    assert ungrounded(CURRENCY, {**args, "amount": 12}, "a dozen USD") == []


def test_text_is_grounded_by_a_content_word_and_a_short_value_by_a_whole_word() -> None:
    assert ungrounded(EMAIL, {"to": "ana@example.com"}, "Email ana@example.com: hi") == []
    assert ungrounded(EMAIL, {"to": "Ana Silva"}, "Write to ana about dinner") == []
    assert ungrounded(EMAIL, {"to": "friend@example.com"}, "Say hello.") == ["to"]
    # a one-word value must be there whole, not just share a word with the conversation
    told = "My friend's address is rui@example.org."
    assert ungrounded(EMAIL, {"to": "friend@example.com"}, told) == ["to"]
    assert ungrounded(EMAIL, {"to": "EUR"}, "Price in euros?") == []  # a code for a word
    # a time by its numbers, in digits or words; a date nobody gave is made up
    assert ungrounded(EMAIL, {"to": "07:00"}, "Wake me at seven in the morning.") == []
    assert ungrounded(EMAIL, {"to": "2024-02-29"}, "How many days in a leap year?") == ["to"]
    # a date whose month was written as a word, in any language; not one with a day made up
    for said in ("Weather on April 25th 2023?", "Tempo a 25 de abril de 2023?"):
        assert ungrounded(EMAIL, {"to": "2023-04-25"}, said) == [], said
    assert ungrounded(EMAIL, {"to": "2023-04-01"}, "Weather in April 2023?") == ["to"]
    assert ungrounded(EMAIL, {"to": "2023-04-25"}, "Weather in 2023?") == ["to"]
    # "AG" for "the chemical symbol for silver": short values must appear as a word
    stock = schema_tool("get_stock_price", "Latest price of a stock.", {"symbol": S}, ["symbol"])
    assert ungrounded(stock, {"symbol": "AG"}, "Which chemical symbol does silver have?")
    assert ungrounded(stock, {"symbol": "NY"}, "Stock of NY times") == []
    # a phone number written with other spacing
    sms = schema_tool("send_sms", "Send a text.", {"phone": S}, ["phone"])
    assert ungrounded(sms, {"phone": "+447700900123"}, "Text +44 7700 900123: hi") == []


def test_an_invented_value_makes_a_loosely_related_call_off_topic(rel: Relevance) -> None:
    say = ["Say hello."]
    assert OFF_TOPIC_BELOW <= rel.scores(say, [(EMAIL.name, EMAIL.description)])["send_email"]
    off = rel.off_topic(say, [(EMAIL, {"to": "friend@example.com", "body": "Hello!"})])
    assert off is not None and off["send_email"].invented == ("to",)
    assert "to not in the conversation" in str(off["send_email"])
    # the same call with the address given in the conversation (context) runs
    context = "My friend is friend@example.com."
    assert rel.off_topic(say, [(EMAIL, {"to": "friend@example.com"})], context) is None


def test_values_are_not_judged_above_the_band(rel: Relevance) -> None:
    # "a week" → days=7 fits: the request scores above GROUNDED_ABOVE, so 7 is not judged
    forecast = schema_tool(
        "get_forecast", "Weather forecast for the next days in a city.",
        {"city": S, "days": {"type": "integer"}}, ["city", "days"],
    )  # fmt: skip
    request = ["Weather forecast for Berlin for the coming week?"]
    assert rel.scores(request, [(forecast.name, forecast.description)])["get_forecast"] >= (
        GROUNDED_ABOVE
    )
    assert rel.off_topic(request, [(forecast, {"city": "Berlin", "days": 7})]) is None


def test_replay_judges_recorded_first_calls_like_the_loop(rel: Relevance, tmp_path: Path) -> None:
    from lar.evals.offtopic import replay
    from lar.evals.toolcalls import load_suite

    timer = {
        "name": "set_timer",
        "description": "Start a countdown timer.",
        "parameters": {
            "type": "object",
            "properties": {"minutes": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["minutes"],
        },
    }
    email = {
        "name": "send_email",
        "description": "Send an email.",
        "parameters": {
            "type": "object",
            "properties": {
                "to": {"type": "string"},
                "subject": {"type": "string"},
                "body": {"type": "string"},
            },
            "required": ["to", "subject", "body"],
        },
    }
    suite = tmp_path / "suite.jsonl"
    suite.write_text(
        "\n".join(
            json.dumps(case)
            for case in [
                {
                    "id": "timer",
                    "category": "single",
                    "question": "Start a countdown for half an hour, please.",
                    "tools": [timer],
                    "expect": {"calls": [{"name": "set_timer", "arguments": {"minutes": 30}}]},
                },
                {
                    "id": "advice",
                    "category": "abstain",
                    "question": "What is a kind way to turn down a party invitation?",
                    "tools": [email],
                    "expect": {"abstain": True},
                },
                {
                    "id": "silent",
                    "category": "abstain",
                    "question": "Why do leaves change colour in autumn?",
                    "tools": [email],
                    "expect": {"abstain": True},
                },
            ]
        )
    )
    rows = [
        {"id": "timer", "calls": [["set_timer", {"minutes": 30}]]},
        {"id": "advice", "calls": [["send_email", {"to": "x@example.com", "body": "No"}]]},
        {"id": "silent", "calls": []},  # abstained: nothing to judge
    ]
    judged = {r.id: r for r in replay(rel, load_suite(suite), rows)}
    assert set(judged) == {"timer", "advice"}
    assert judged["timer"].fits and judged["timer"].verdict is None
    verdict = judged["advice"].verdict
    assert verdict is not None and verdict["send_email"].invented == ("to", "body")


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("What is the weather in Lisbon?", True),
        ("Convert 5 euros to dollars", True),
        ("Como está o tempo em Lisboa?", False),
        ("Was ist das Wetter in Berlin?", False),  # two frequent English words, yet German
        ("Quel temps fait-il à Lisbonne ?", False),
        ("¿Qué tiempo hace en Lisboa?", False),
        ("里斯本的天气怎么样？", False),
        ("Hoe is het weer in Amsterdam?", False),
        ("12345", False),
    ],
)
def test_the_embedder_is_trusted_only_for_english(text: str, english: bool) -> None:
    from lar.calling.relevance import in_embedder_language

    assert in_embedder_language(text) is english


def test_without_the_language_identifier_every_request_counts_as_unsure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import lar.calling.relevance as relevance

    monkeypatch.setattr(relevance, "_IDENTIFIER", [None])
    assert relevance.in_embedder_language("What is the weather in Lisbon?") is False


def test_a_chinese_value_is_found_inside_an_unspaced_request() -> None:
    weather = SchemaTool(
        "get_weather", "Current weather for a city.",
        {"properties": {"city": {"type": "string"}}, "required": ["city"]}, lambda **kw: "",
    )  # fmt: skip
    assert ungrounded(weather, {"city": "里斯本"}, "请告诉我里斯本的天气") == []
    assert ungrounded(weather, {"city": "北京"}, "请告诉我里斯本的天气") == ["city"]


POPULATION = schema_tool("get_population", "Population of a city.", {"city": S}, ["city"])


@pytest.mark.parametrize(
    ("request_", "city", "doubted"),
    [
        ("Population of the city my colleague Marta works in?", "Marta's city", True),
        ("How many people live where my next trip goes?", "destination city", True),
        ("How many people live in New York City?", "New York City", False),  # as written
        ("How many people live in Lisbon?", "Lisbon", False),
        ("Quantas pessoas vivem na cidade da Marta?", "cidade da Marta", False),  # other words
    ],
)
def test_a_value_that_describes_itself_is_doubted_even_on_a_fitting_tool(
    request_: str, city: str, doubted: bool
) -> None:
    assert placeholders(POPULATION, {"city": city}, request_) == (["city"] if doubted else [])
    rel = Relevance(MiniLMEmbedder())
    (verdict,) = rel.judge([request_], [(POPULATION, {"city": city})])
    if doubted:
        assert verdict is not None and verdict.invented == ("city",)
    elif verdict is not None:  # a lower score may be judged, but no value is doubted
        assert verdict.invented == ()
