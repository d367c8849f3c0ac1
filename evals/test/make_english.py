"""Writes the English slice of the frozen test set (evals/test/english.jsonl).

    python evals/test/make_english.py

Written once, with tools that neither the dev set (evals/tools/) nor the non-English slice use
and with other phrasings (commands, questions with context, typos, indirect requests). It is
never tuned on: adding cases is fine; editing one after seeing how a model does on it is not
(evals/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "tools"))

from make_suites import cases  # noqa: E402 - the dev set's script, beside this one

S, INT, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}


def fn(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": props, "required": required},
    }


def enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


TABLE = fn(
    "book_table",
    "Reserve a table at a restaurant.",
    {"restaurant": S, "people": INT, "time": {"type": "string", "description": "HH:MM, 24h"}},
    ["restaurant", "people", "time"],
)
BUS = fn(
    "get_bus_arrivals",
    "Next buses at a bus stop, by the stop's code.",
    {"stop_code": S},
    ["stop_code"],
)
STOCKROOM = fn(
    "check_inventory",
    "How many units of a product (by SKU) are in the warehouse.",
    {"sku": S},
    ["sku"],
)
SUN = fn(
    "get_sun_times",
    "Sunrise and sunset times for a city on a date (YYYY-MM-DD).",
    {"city": S, "date": S},
    ["city"],
)
DICT = fn("define_word", "Dictionary definition of an English word.", {"word": S}, ["word"])
WORKOUT = fn(
    "log_workout",
    "Record a workout in my fitness log.",
    {"activity": enum("run", "cycle", "swim", "walk"), "minutes": INT, "distance_km": N},
    ["activity", "minutes"],
)
EXPENSE = fn(
    "log_expense",
    "Add an expense to my budget.",
    {"amount": N, "category": enum("food", "transport", "housing", "fun", "other"), "note": S},
    ["amount", "category"],
)
BMI = fn(
    "compute_bmi",
    "Body mass index from weight and height.",
    {"weight_kg": N, "height_cm": N},
    ["weight_kg", "height_cm"],
)
RENAME = fn(
    "rename_file",
    "Rename a file in my documents folder.",
    {"path": S, "new_name": S},
    ["path", "new_name"],
)
PLAYLIST = fn(
    "create_playlist",
    "Create a music playlist with songs.",
    {"name": S, "songs": {"type": "array", "items": S}},
    ["name", "songs"],
)
MEETING = fn(
    "schedule_meeting",
    "Put a meeting in my work calendar.",
    {
        "title": S,
        "attendees": {"type": "array", "items": S},
        "start": {"type": "string", "description": "YYYY-MM-DD HH:MM"},
        "minutes": INT,
    },
    ["title", "attendees", "start"],
)
FERRY = fn(
    "get_ferry_times",
    "Ferry departures between two ports today.",
    {"from_port": S, "to_port": S},
    ["from_port", "to_port"],
)
BALANCE = fn(
    "get_balance",
    "Balance of one of my bank accounts.",
    {"account": enum("checking", "savings")},
    ["account"],
)
LOANS = fn(
    "list_library_loans", "The library books I have borrowed, with ids and due dates.", {}, []
)
RENEW = fn("renew_loan", "Renew a borrowed library book by its id.", {"book_id": S}, ["book_id"])
MY_CAR = fn("get_my_car", "My car's make, model and licence plate.", {}, [])
FINES = fn(
    "get_parking_fines", "Unpaid parking fines for a licence plate.", {"plate": S}, ["plate"]
)
COLLEAGUE = fn(
    "find_colleague", "A colleague's work email and team, by name.", {"name": S}, ["name"]
)
TRANSLATE_DOC = fn(
    "count_words", "Count the words in a file of my documents folder.", {"path": S}, ["path"]
)
PHARMACY = fn(
    "find_pharmacy", "Open pharmacies near a street address.", {"address": S}, ["address"]
)
QUOTE = fn(
    "get_crypto_price",
    "Current price of a cryptocurrency in US dollars.",
    {"symbol": S},
    ["symbol"],
)
PACK = fn(
    "packing_list",
    "A packing list for a trip, by number of days and climate.",
    {"days": INT, "climate": enum("hot", "mild", "cold")},
    ["days", "climate"],
)

SINGLE: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    (
        "Book a table for 4 at Casa Lupo at 20:30.",
        [TABLE],
        call("book_table", restaurant="Casa Lupo", people=4, time="20:30"),
    ),
    ("When's the next bus at stop 4417?", [BUS], call("get_bus_arrivals", stop_code="4417")),
    (
        "how many of SKU KB-220 do we still have in the warehouse",
        [STOCKROOM],
        call("check_inventory", sku="KB-220"),
    ),
    (
        "What time does the sun set in Reykjavik on 2026-06-21?",
        [SUN],
        call("get_sun_times", city="Reykjavik", date="2026-06-21"),
    ),
    ("Define the word 'ephemeral' for me.", [DICT], call("define_word", word="ephemeral")),
    (
        "I just swam for 45 minutes, please log it.",
        [WORKOUT],
        call("log_workout", activity="swim", minutes=45),
    ),
    ("Log a 12.50 expense for food.", [EXPENSE], call("log_expense", amount=12.5, category="food")),
    (
        "My weight is 70 kg and I'm 175 cm tall. What's my BMI?",
        [BMI],
        call("compute_bmi", weight_kg=70, height_cm=175),
    ),
    (
        "Rename report-final.docx to report-2026.docx.",
        [RENAME],
        call("rename_file", path="report-final.docx", new_name="report-2026.docx"),
    ),
    (
        "Make a playlist called Road Trip with 'Africa' and 'Take On Me'.",
        [PLAYLIST],
        call("create_playlist", name="Road Trip", songs=["Africa", "Take On Me"]),
    ),
    (
        "Ferries from Lisbon to Barreiro today?",
        [FERRY],
        call("get_ferry_times", from_port="Lisbon", to_port="Barreiro"),
    ),
    ("How much money is in my savings account?", [BALANCE], call("get_balance", account="savings")),
    ("What's Bitcoin trading at right now? (BTC)", [QUOTE], call("get_crypto_price", symbol="BTC")),
    (
        "Which pharmacies are open near Rua Augusta 100?",
        [PHARMACY],
        call("find_pharmacy", address="Rua Augusta 100"),
    ),
    ("How many words are in thesis.txt?", [TRANSLATE_DOC], call("count_words", path="thesis.txt")),
    (
        "I cycled 20 km in 55 minutes this morning - add that to my log.",
        [WORKOUT],
        call("log_workout", activity="cycle", minutes=55, distance_km=20),
    ),
    (
        "Packing list for a 5-day trip somewhere cold, please.",
        [PACK],
        call("packing_list", days=5, climate="cold"),
    ),
    (
        "Put a meeting 'Budget review' with ana@corp.example on 2026-12-03 10:00.",
        [MEETING],
        call(
            "schedule_meeting",
            title="Budget review",
            attendees=["ana@corp.example"],
            start="2026-12-03 10:00",
        ),
    ),
    (
        "Reserve Sakura Bar for two people, 19:00.",
        [TABLE],
        call("book_table", restaurant="Sakura Bar", people=2, time="19:00"),
    ),
    (
        "spent 30 on a taxi, transport category",
        [EXPENSE],
        call("log_expense", amount=30, category="transport"),
    ),
]

CHOOSE: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("Is SKU MUG-9 in stock?", [BUS, STOCKROOM, QUOTE, SUN], call("check_inventory", sku="MUG-9")),
    (
        "What's ETH worth today?",
        [STOCKROOM, QUOTE, BALANCE],
        call("get_crypto_price", symbol="ETH"),
    ),
    (
        "Check my checking account balance.",
        [BALANCE, EXPENSE, QUOTE],
        call("get_balance", account="checking"),
    ),
    (
        "What does 'ubiquitous' mean?",
        [DICT, TRANSLATE_DOC, RENAME],
        call("define_word", word="ubiquitous"),
    ),
    ("Sunrise in Tromsø?", [SUN, FERRY, BUS], call("get_sun_times", city="Tromsø")),
    (
        "Log a 30-minute walk.",
        [EXPENSE, WORKOUT, MEETING],
        call("log_workout", activity="walk", minutes=30),
    ),
    ("Next buses at stop 902?", [FERRY, BUS, PHARMACY], call("get_bus_arrivals", stop_code="902")),
    (
        "Add 8 euros of cinema to my budget under fun.",
        [WORKOUT, EXPENSE, BALANCE],
        call("log_expense", amount=8, category="fun"),
    ),
    (
        "Ferry times from Cais do Sodré to Cacilhas.",
        [BUS, FERRY, SUN],
        call("get_ferry_times", from_port="Cais do Sodré", to_port="Cacilhas"),
    ),
    (
        "Any pharmacy open near Avenida da Liberdade 50?",
        [PHARMACY, TABLE, BUS],
        call("find_pharmacy", address="Avenida da Liberdade 50"),
    ),
    (
        "Count the words in notes/ideas.md.",
        [RENAME, TRANSLATE_DOC, DICT],
        call("count_words", path="notes/ideas.md"),
    ),
    (
        "Book Tasca do Chico for 6 at 21:00.",
        [MEETING, TABLE, PHARMACY],
        call("book_table", restaurant="Tasca do Chico", people=6, time="21:00"),
    ),
]

PARALLEL: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    (
        "Check stock for SKUs A-1 and B-2.",
        [STOCKROOM],
        [call("check_inventory", sku="A-1"), call("check_inventory", sku="B-2")],
    ),
    (
        "Prices of BTC and SOL?",
        [QUOTE],
        [call("get_crypto_price", symbol="BTC"), call("get_crypto_price", symbol="SOL")],
    ),
    (
        "Define 'laconic' and 'verbose'.",
        [DICT],
        [call("define_word", word="laconic"), call("define_word", word="verbose")],
    ),
    (
        "Show me both of my account balances, checking and savings.",
        [BALANCE],
        [call("get_balance", account="checking"), call("get_balance", account="savings")],
    ),
    (
        "Next buses at stops 120, 121 and 122.",
        [BUS],
        [
            call("get_bus_arrivals", stop_code="120"),
            call("get_bus_arrivals", stop_code="121"),
            call("get_bus_arrivals", stop_code="122"),
        ],
    ),
    (
        "Sunset times in Seville and in Bilbao?",
        [SUN],
        [call("get_sun_times", city="Seville"), call("get_sun_times", city="Bilbao")],
    ),
    (
        "Log a 20 minute run and a 40 minute swim.",
        [WORKOUT],
        [
            call("log_workout", activity="run", minutes=20),
            call("log_workout", activity="swim", minutes=40),
        ],
    ),
    (
        "Word counts for a.txt, b.txt please",
        [TRANSLATE_DOC],
        [call("count_words", path="a.txt"), call("count_words", path="b.txt")],
    ),
]

ABSTAIN: list[tuple[str, list[dict[str, Any]], list[str]]] = [
    ("Who painted the ceiling of the Sistine Chapel?", [TABLE, BUS], ["michelangelo"]),
    ("How many legs does a spider have?", [WORKOUT, BMI], ["8", "eight"]),
    ("Write a haiku about autumn.", [PLAYLIST, DICT], []),
    ("What is the boiling point of water at sea level in celsius?", [SUN, QUOTE], ["100"]),
    ("Thanks, that's all for today!", [EXPENSE, BALANCE], []),
    ("What is the square root of 144?", [STOCKROOM, RENAME], ["12"]),
    ("Tell me a fun fact about octopuses.", [FERRY, PHARMACY], []),
    ("Which ocean is the largest?", [BUS, SUN], ["pacific"]),
    ("What's the plural of 'mouse'?", [TRANSLATE_DOC, MEETING], ["mice"]),
    ("Hi there, how are you doing?", [TABLE, WORKOUT], []),
    ("In which year did the Berlin Wall fall?", [QUOTE, PACK], ["1989"]),
    ("Suggest a name for a grey cat.", [PLAYLIST, STOCKROOM], []),
]

TWO_STEP: list[
    tuple[str, list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], list[str]]
] = [
    (
        "Renew the library book that's due soonest.",
        [LOANS, RENEW],
        [call("list_library_loans"), call("renew_loan", book_id="B-5521")],
        {
            "list_library_loans": "B-5521 'Dune', due 2026-12-02; B-1180 'Emma', due 2026-12-20",
            "renew_loan": "renewed until 2026-12-16",
        },
        [],
    ),
    (
        "Do I have any unpaid parking fines on my car?",
        [MY_CAR, FINES],
        [call("get_my_car"), call("get_parking_fines", plate="AA-12-BC")],
        {"get_my_car": "Renault Clio, plate AA-12-BC", "get_parking_fines": "one fine, 30 EUR"},
        ["30"],
    ),
    (
        "Set up a meeting 'Roadmap' with my colleague Priya on 2026-12-04 15:00.",
        [COLLEAGUE, MEETING],
        [
            call("find_colleague", name="Priya"),
            call(
                "schedule_meeting",
                title="Roadmap",
                attendees=["priya.n@corp.example"],
                start="2026-12-04 15:00",
            ),
        ],
        {
            "find_colleague": "Priya Nair, priya.n@corp.example, Platform team",
            "schedule_meeting": "scheduled",
        },
        [],
    ),
    (
        "Renew my borrowed copy of 'Emma'.",
        [LOANS, RENEW],
        [call("list_library_loans"), call("renew_loan", book_id="B-1180")],
        {
            "list_library_loans": "B-5521 'Dune', due 2026-12-02; B-1180 'Emma', due 2026-12-20",
            "renew_loan": "renewed until 2027-01-03",
        },
        [],
    ),
    (
        "Invite my colleague Tomás to a 'Retro' meeting on 2026-12-05 09:30.",
        [COLLEAGUE, MEETING],
        [
            call("find_colleague", name="Tomás"),
            call(
                "schedule_meeting",
                title="Retro",
                attendees=["tomas.r@corp.example"],
                start="2026-12-05 09:30",
            ),
        ],
        {
            "find_colleague": "Tomás Reis, tomas.r@corp.example, Mobile team",
            "schedule_meeting": "scheduled",
        },
        [],
    ),
    (
        "Check parking fines for the car I drive.",
        [MY_CAR, FINES],
        [call("get_my_car"), call("get_parking_fines", plate="77-XZ-01")],
        {"get_my_car": "Toyota Yaris, plate 77-XZ-01", "get_parking_fines": "no unpaid fines"},
        [],
    ),
]


def main() -> None:
    suites = cases("en-", SINGLE, CHOOSE, PARALLEL, ABSTAIN, TWO_STEP)
    rows = [c for category in suites.values() for c in category]
    path = HERE / "english.jsonl"
    head = "# Frozen test set, English slice: written once, never tuned on (evals/README.md).\n"
    path.write_text(head + "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in rows))
    print(f"{path.name}: {len(rows)} cases")


if __name__ == "__main__":
    main()
