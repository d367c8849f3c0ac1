"""Writes evals/relevance/grounding.jsonl: held-out cases for the ungrounded-argument signal.

    python evals/relevance/make_grounding.py

Not an eval suite of its own: ``bench/relevance.py --calls RESULTS`` replays the off-topic rule
on the calls a model made for these requests (``lar eval --suite`` with the check off). Half the
requests fit a tool but need a value the request does not spell out ("half an hour" → 30, "the
Big Apple" → New York, "Swiss francs" → CHF): the calls the signal must *not* refuse. The other
half fit no tool but share words with one ("boiling point of water in Celsius"): the calls it
should catch. None of the requests is in evals/tools/ (the band was read off those).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "tools"))

from make_suites import (  # noqa: E402
    ALARM,
    CAPITAL,
    CURRENCY,
    EMAIL,
    EVENT,
    FORECAST,
    LIGHTS,
    NOTES,
    POPULATION,
    SMS,
    STOCK,
    TEMP,
    THERMO,
    TIMER,
    UNITS,
    WEATHER,
    call,
)  # fmt: skip

FITTING: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("Set a timer for half an hour.", [TIMER, ALARM], call("set_timer", minutes=30)),
    ("Wake me at seven in the morning.", [ALARM, TIMER], call("set_alarm", time="07:00")),
    (
        "How much is a hundred euros in British pounds?",
        [CURRENCY, STOCK],
        call("convert_currency", amount=100, from_currency="EUR", to_currency="GBP"),
    ),
    ("Price of Microsoft stock?", [STOCK, CURRENCY], call("get_stock_price", symbol="MSFT")),
    (
        "What's the weather like in the Big Apple?",
        [WEATHER, POPULATION],
        call("get_weather", city="New York"),
    ),
    (
        "Convert ninety-eight point six Fahrenheit to Celsius.",
        [TEMP, THERMO],
        call("convert_temperature", value=98.6, from_unit="fahrenheit", to_unit="celsius"),
    ),
    (
        "Email boss@corp.com that I'll be late today.",
        [EMAIL, SMS],
        call("send_email", to="boss@corp.com"),
    ),
    (
        "Forecast for Berlin for the coming week.",
        [FORECAST, WEATHER],
        call("get_forecast", city="Berlin", days=7),
    ),
    (
        "Turn on the living room lights at half brightness.",
        [LIGHTS, THERMO],
        call("set_lights", room="living room", on=True, brightness=50),
    ),
    (
        "How many kilometres is a mile?",
        [UNITS, TEMP],
        call("convert_length", value=1, from_unit="mi", to_unit="km"),
    ),
    (
        "Population of the French capital?",
        [POPULATION, CAPITAL],
        call("get_population", city="Paris"),
    ),
    (
        "Set the heating to twenty-one degrees.",
        [THERMO, LIGHTS],
        call("set_thermostat", celsius=21),
    ),
    (
        "Exchange fifty Swiss francs into yen.",
        [CURRENCY, STOCK],
        call("convert_currency", amount=50, from_currency="CHF", to_currency="JPY"),
    ),
    ("Timer for a quarter of an hour, please.", [TIMER, ALARM], call("set_timer", minutes=15)),
    (
        "How's the weather in the capital of Japan?",
        [WEATHER, CAPITAL],
        call("get_weather", city="Tokyo"),
    ),
    ("What is Tesla's share price?", [STOCK, CURRENCY], call("get_stock_price", symbol="TSLA")),
    (
        "Convert zero degrees Celsius to Kelvin.",
        [TEMP, THERMO],
        call("convert_temperature", value=0, from_unit="celsius", to_unit="kelvin"),
    ),
    ("Set an alarm for noon.", [ALARM, TIMER], call("set_alarm", time="12:00")),
    (
        "Forecast for Oslo for the next three days?",
        [FORECAST, WEATHER],
        call("get_forecast", city="Oslo", days=3),
    ),
    (
        "Text +44 7700 900123: see you soon.",
        [SMS, EMAIL],
        call("send_sms", phone="+44 7700 900123", text="see you soon"),
    ),
    ("Search my notes for the dentist.", [NOTES, EVENT], call("search_notes", query="dentist")),
    (
        "How many feet are in two metres?",
        [UNITS, TEMP],
        call("convert_length", value=2, from_unit="m", to_unit="ft"),
    ),
    (
        "Convert a thousand yen to US dollars.",
        [CURRENCY, STOCK],
        call("convert_currency", amount=1000, from_currency="JPY", to_currency="USD"),
    ),
    (
        "Put lunch with Ana on 2027-03-04 in my calendar.",
        [EVENT, ALARM],
        call("add_calendar_event", title="Lunch with Ana", date="2027-03-04"),
    ),
]

UNRELATED: list[tuple[str, list[dict[str, Any]]]] = [
    ("What is the boiling point of water in Celsius?", [TEMP, WEATHER]),
    ("Who wrote 'The Old Man and the Sea'?", [NOTES, WEATHER]),
    ("Explain what a stock split is.", [STOCK, CURRENCY]),
    ("Say good night to me.", [SMS, EMAIL]),
    ("What's a good name for a cat?", [TIMER, EVENT]),
    ("How many weeks are there in a year?", [EVENT, ALARM]),
    ("Write a short poem about the rain.", [WEATHER, FORECAST]),
    ("What does the word 'currency' mean?", [CURRENCY, STOCK]),
    ("Tell me a fun fact about Paris.", [POPULATION, CAPITAL]),
    ("How do I politely decline an invitation?", [EMAIL, EVENT]),
    ("Which is heavier, a kilo of feathers or a kilo of iron?", [UNITS, TEMP]),
    ("Give me three synonyms for 'happy'.", [NOTES, SMS]),
    ("Why is the sky blue?", [WEATHER, LIGHTS]),
    ("How many legs does a spider have?", [POPULATION, NOTES]),
    ("What is the square root of 144?", [UNITS, TIMER]),
    ("Suggest a title for my essay about climate change.", [FORECAST, NOTES]),
    ("What's the opposite of hot?", [THERMO, TEMP]),
    ("Summarize the plot of Romeo and Juliet.", [EMAIL, EVENT]),
    ("Spell 'necessary' backwards.", [SMS, NOTES]),
    ("Which currency does Japan use?", [CURRENCY, CAPITAL]),
    ("What is the chemical formula of water?", [STOCK, WEATHER]),
    ("Recommend a book for a long flight.", [ALARM, FORECAST]),
    ("How long should I boil an egg?", [TIMER, TEMP]),
    ("What colour do you get mixing blue and yellow?", [LIGHTS, THERMO]),
]


def main() -> None:
    lines = ["# Held-out cases for the ungrounded-argument signal (make_grounding.py); "
             "not in evals/tools."]  # fmt: skip
    for i, (q, tools, expected) in enumerate(FITTING, 1):
        case = {"id": f"fits-{i:02d}", "category": "single", "question": q, "tools": tools,
                "expect": {"calls": [expected]}}  # fmt: skip
        lines.append(json.dumps(case, ensure_ascii=False))
    for i, (q, tools) in enumerate(UNRELATED, 1):
        case = {"id": f"unrelated-{i:02d}", "category": "abstain", "question": q,
                "tools": tools, "expect": {"abstain": True}}  # fmt: skip
        lines.append(json.dumps(case, ensure_ascii=False))
    (HERE / "grounding.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
