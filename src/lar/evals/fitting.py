"""A generated suite of requests that an offered tool fits, for ``lar eval`` (issue 45,
Must-show 6): math, science, unit conversions and lookups, each to be answered by calling the
tool, not worked out in prose.

Why: the 1.5B model was seen solving a math problem in prose although a tool that fits was
offered. A fixed handful of such cases says little, so this draws fresh ones from a seed, in
six languages (``lar.evals.draws.LANGUAGES``), each expectation computed from what was drawn.

Each case is one line of the tool-calling suite format (``lar.evals.toolcalls``), category
``single``: 2 to 4 tools (the one that fits and 1 to 3 others from the same pool, in a drawn
order), and ``expect.calls`` holds exactly one call of the fitting tool, with arguments that
stand in the request as they are: numbers written with a decimal point in every language,
enum values (a unit), or a name as the request writes it (a country, an element). ``results``
gives every offered tool a return value (the fitting tool's computed where it is math).

Kinds (the ``kind`` in an id ``fit{seed}-{lang}-{kind}-{n}``): math (``hypotenuse``,
``circle``, ``interest``, ``gcd``), science (``kinetic``, ``density``), ``units`` and lookups
(``population``, ``element``, ``capital``); they take turns, so ``per_language=20`` gives each
two cases a language, 120 in all. Build a suite and run it::

    python -m lar.evals.fitting --seed 7 --per-language 20 > /tmp/fits.jsonl
    lar eval --suite /tmp/fits.jsonl --track protocol

Seeds follow the draws' split (``lar.evals.draws.part_of``): 0-9999 are dev (tune on them),
10000-19999 test (report only, never drawn while tuning); ``main`` refuses any other seed and
says on stderr which part a seed is in. A case depends on its seed and language only (each
language has its own ``random.Random``), so a draw of some languages holds the same cases as
a draw of all of them.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from lar.evals.draws import LANGUAGES, in_turns, part_of
from lar.evals.draws.reckoning import CONVERSIONS, UNIT_NAMES
from lar.evals.fitting_phrases import COUNTRIES, ELEMENTS, MONEY, PHRASES, Named

__all__ = ["GROUPS", "KINDS", "TOOLS", "UNIT_ENUM", "cases", "main"]

Number = int | float
Drawn = tuple[dict[str, str], dict[str, Any], Any]
"""What a kind draws: the template's fields, the fitting call's arguments, the tool's result."""

UNIT_ENUM = {"km": "kilometers", "mi": "miles", "kg": "kilograms", "lb": "pounds",
             "c": "celsius", "f": "fahrenheit"}  # fmt: skip
"""The conversion tool's unit names (its enum), by the draws' unit keys."""


def _number(
    rng: random.Random, low: int, high: int, places: int | None = None
) -> tuple[str, Number]:
    """A number from ``low`` to ``high`` with 0, 1 or 2 decimal places (drawn unless given),
    as the request writes it (a point, no trailing zeros) and as the call's argument."""
    places = rng.choice((0, 1, 2)) if places is None else places
    scale = 10**places
    text = format(Decimal(rng.randint(low * scale, high * scale)).scaleb(-places), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text, float(text) if "." in text else int(text)


def _schema(required: Sequence[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def _num(description: str) -> dict[str, Any]:
    return {"type": "number", "description": description}


def _int(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": description}


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_UNIT = {"type": "string", "enum": list(UNIT_ENUM.values())}

TOOLS: dict[str, dict[str, Any]] = {
    "hypotenuse": {
        "name": "hypotenuse",
        "description": "Length of the hypotenuse of a right triangle from the lengths of its "
        "two legs (the sides that meet at the right angle).",
        "parameters": _schema(
            ["a", "b"], a=_num("length of one leg"), b=_num("length of the other leg")
        ),
    },
    "circle": {
        "name": "circle_area",
        "description": "Area of a circle from its radius (in the square of the radius's unit).",
        "parameters": _schema(["radius"], radius=_num("the circle's radius")),
    },
    "interest": {
        "name": "compound_interest",
        "description": "Final amount of a deposit with interest compounded once a year.",
        "parameters": _schema(
            ["principal", "rate_percent", "years"],
            principal=_num("the amount deposited"),
            rate_percent=_num("yearly interest rate in percent (5 for 5 %)"),
            years=_int("how many years the deposit grows"),
        ),
    },
    "gcd": {
        "name": "greatest_common_divisor",
        "description": "Greatest common divisor of two whole numbers.",
        "parameters": _schema(["a", "b"], a=_int("the first number"), b=_int("the second number")),
    },
    "kinetic": {
        "name": "kinetic_energy",
        "description": "Kinetic energy in joules of a body from its mass (kg) and speed (m/s).",
        "parameters": _schema(
            ["mass_kg", "velocity_m_s"],
            mass_kg=_num("mass in kilograms"),
            velocity_m_s=_num("speed in meters per second"),
        ),
    },
    "density": {
        "name": "density",
        "description": "Density in g/cm³ from a mass in grams and a volume in cubic centimeters.",
        "parameters": _schema(
            ["mass_g", "volume_cm3"],
            mass_g=_num("mass in grams"),
            volume_cm3=_num("volume in cubic centimeters"),
        ),
    },
    "units": {
        "name": "convert_units",
        "description": "Convert a value between units of length (kilometers, miles), mass "
        "(kilograms, pounds) or temperature (celsius, fahrenheit).",
        "parameters": _schema(
            ["value", "from_unit", "to_unit"],
            value=_num("the value to convert"),
            from_unit={**_UNIT, "description": "the value's unit"},
            to_unit={**_UNIT, "description": "the unit wanted"},
        ),
    },
    "population": {
        "name": "country_population",
        "description": "Latest population estimate of a country.",
        "parameters": _schema(["country"], country=_text("the country, as the user names it")),
    },
    "element": {
        "name": "element_atomic_number",
        "description": "Atomic number and symbol of a chemical element.",
        "parameters": _schema(["element"], element=_text("the element, as the user names it")),
    },
    "capital": {
        "name": "capital_city",
        "description": "Capital city of a country.",
        "parameters": _schema(["country"], country=_text("the country, as the user names it")),
    },
}

GROUPS = {
    "hypotenuse": "math", "circle": "math", "interest": "math", "gcd": "math",
    "kinetic": "science", "density": "science", "units": "units",
    "population": "lookups", "element": "lookups", "capital": "lookups",
}  # fmt: skip
"""Each kind's group, as the issue names them."""


def _hypotenuse(rng: random.Random, lang: str) -> Drawn:
    (a, av), (b, bv) = _number(rng, 1, 60), _number(rng, 1, 60)
    return {"a": a, "b": b}, {"a": av, "b": bv}, {"hypotenuse": round(math.hypot(av, bv), 4)}


def _circle(rng: random.Random, lang: str) -> Drawn:
    r, rv = _number(rng, 1, 80)
    return {"r": r}, {"radius": rv}, {"area": round(math.pi * rv * rv, 4)}


def _interest(rng: random.Random, lang: str) -> Drawn:
    pv = rng.randint(10, 500) * 100  # a round sum, as deposits are
    rate, rv = _number(rng, 1, 9, rng.choice((0, 1)))
    years = rng.randint(2, 30)
    amount = round(pv * (1 + rv / 100) ** years, 2)
    fields = {"p": str(pv), "rate": rate, "years": str(years), "money": MONEY[lang]}
    args = {"principal": pv, "rate_percent": rv, "years": years}
    return fields, args, {"final_amount": amount, "interest": round(amount - pv, 2)}


def _gcd(rng: random.Random, lang: str) -> Drawn:
    g = rng.randint(2, 60)
    x, y = rng.sample(range(2, 80), 2)
    a, b = g * x, g * y
    return {"a": str(a), "b": str(b)}, {"a": a, "b": b}, {"gcd": math.gcd(a, b)}


def _kinetic(rng: random.Random, lang: str) -> Drawn:
    (m, mv), (v, vv) = _number(rng, 1, 2000), _number(rng, 1, 90)
    joules = round(0.5 * mv * vv * vv, 4)
    return {"m": m, "v": v}, {"mass_kg": mv, "velocity_m_s": vv}, {"joules": joules}


def _density(rng: random.Random, lang: str) -> Drawn:
    (m, mv), (vol, vv) = _number(rng, 1, 5000), _number(rng, 1, 2000)
    fields, args = {"m": m, "vol": vol}, {"mass_g": mv, "volume_cm3": vv}
    return fields, args, {"density_g_cm3": round(mv / vv, 4)}


def _units(rng: random.Random, lang: str) -> Drawn:
    src, dst = rng.choice(list(CONVERSIONS))
    if src in ("c", "f"):
        value, number = _number(rng, 0 if src == "c" else 32, 45 if src == "c" else 110,
                                rng.choice((0, 1)))  # fmt: skip
    else:
        value, number = _number(rng, 1, 900, rng.choice((1, 2)))
    converted = float(round(CONVERSIONS[src, dst](Decimal(value)), 2))
    names = UNIT_NAMES[lang]
    fields = {"value": value, "src": names[src], "dst": names[dst]}
    args = {"value": number, "from_unit": UNIT_ENUM[src], "to_unit": UNIT_ENUM[dst]}
    return fields, args, {"value": converted, "unit": UNIT_ENUM[dst]}


def _named(
    rng: random.Random, lang: str, table: Sequence[Named]
) -> tuple[dict[str, str], str, dict[str, Any]]:
    """A country or element as ``lang`` writes it: the fields ``name`` and ``of``, the name."""
    names, facts = rng.choice(table)
    prep, _, name = names[lang].rpartition("|")
    of = prep + ("" if not prep or prep.endswith("'") else " ") + name
    return {"name": name, "of": of}, name, dict(facts)


def _population(rng: random.Random, lang: str) -> Drawn:
    fields, name, facts = _named(rng, lang, COUNTRIES)
    result = {"country": name, "population": facts["population"], "year": 2023}
    return fields, {"country": name}, result


def _element(rng: random.Random, lang: str) -> Drawn:
    fields, name, facts = _named(rng, lang, ELEMENTS)
    return fields, {"element": name}, {"element": name, **facts}


def _capital(rng: random.Random, lang: str) -> Drawn:
    fields, name, facts = _named(rng, lang, COUNTRIES)
    return fields, {"country": name}, {"country": name, "capital": facts["capital"]}


@dataclass(frozen=True, slots=True)
class Kind:
    group: str
    tool: dict[str, Any]
    draw: Callable[[random.Random, str], Drawn]


KINDS: dict[str, Kind] = {
    name: Kind(GROUPS[name], TOOLS[name], fn)
    for name, fn in (
        ("hypotenuse", _hypotenuse), ("circle", _circle), ("interest", _interest),
        ("gcd", _gcd), ("kinetic", _kinetic), ("density", _density), ("units", _units),
        ("population", _population), ("element", _element), ("capital", _capital),
    )
}  # fmt: skip


def _others(rng: random.Random, kind: str) -> list[str]:
    """1 to 3 other kinds whose tools are offered beside the fitting one: one of the same
    group first where the group has another (a close neighbour), the rest from any group."""
    rest = [k for k in KINDS if k != kind]
    near = [k for k in rest if GROUPS[k] == GROUPS[kind]]
    chosen = [rng.choice(near)] if near else []
    left = [k for k in rest if k not in chosen]
    chosen += rng.sample(left, rng.randint(1, 3) - len(chosen))
    return chosen


def _case(rng: random.Random, seed: int, lang: str, kind: str, n: int) -> dict[str, Any]:
    fields, arguments, result = KINDS[kind].draw(rng, lang)
    question = rng.choice(PHRASES[lang][kind]).format(**fields)
    tool = KINDS[kind].tool
    results = {tool["name"]: result}
    offered = [tool]
    for other in _others(rng, kind):
        offered.append(KINDS[other].tool)
        results[KINDS[other].tool["name"]] = KINDS[other].draw(rng, lang)[2]
    rng.shuffle(offered)
    offered = copy.deepcopy(offered)  # each case its own, whatever a caller does with one
    return {
        "id": f"fit{seed}-{lang}-{kind}-{n}",
        "category": "single",
        "question": question,
        "tools": offered,
        "results": results,
        "expect": {"calls": [{"name": tool["name"], "arguments": arguments}]},
    }


def cases(
    seed: int, *, per_language: int = 20, languages: Sequence[str] = LANGUAGES
) -> list[dict[str, Any]]:
    """``per_language`` cases in each language, the kinds taking turns; each a JSON object of
    the tool-calling suite format (``lar.evals.toolcalls``)."""
    return [
        _case(rng, seed, lang, kind, n)
        for rng, lang, kind, n in in_turns(f"fit:{seed}", KINDS, per_language, languages)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Write a drawn suite to stdout as JSONL; which part the seed is in goes to stderr.
    A seed in neither part raises ``ValueError`` (``part_of``)."""
    parser = argparse.ArgumentParser(
        prog="python -m lar.evals.fitting",
        description="Write a generated suite of requests that an offered tool fits (math, "
        "science, unit conversions, lookups) as JSONL for `lar eval --suite FILE`: each case "
        "offers 2-4 tools and expects one call of the fitting one.",
        epilog="seeds: 0-9999 are dev (tune on them); 10000-19999 are test (report only, never\n"
        "drawn while tuning); any other seed is refused.\n\nexample:\n"
        "  python -m lar.evals.fitting --seed 7 --per-language 20 > /tmp/fits.jsonl\n"
        "  lar eval --suite /tmp/fits.jsonl --track protocol",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, required=True, help="the draw's seed (0-19999)")
    parser.add_argument(
        "--per-language", type=int, default=20,
        help=f"cases per language, the {len(KINDS)} kinds taking turns (default 20)",
    )  # fmt: skip
    parser.add_argument(
        "--languages", default=",".join(LANGUAGES),
        help=f"comma-separated languages (default: all of {','.join(LANGUAGES)})",
    )  # fmt: skip
    args = parser.parse_args(argv)
    part = part_of(args.seed)
    languages = [lang.strip() for lang in args.languages.split(",") if lang.strip()]
    drawn = cases(args.seed, per_language=args.per_language, languages=languages)
    for case in drawn:
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(
        f"seed {args.seed} is a {part} seed ({'tune on it' if part == 'dev' else 'report only'})"
        f": {len(drawn)} cases in {', '.join(languages)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
