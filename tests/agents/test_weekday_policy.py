"""contradicted_weekday: an answer naming another weekday than the one the calendar gave is
mended to the calendar's, in the answer's language; an answer that names the right one, or
none, or follows a span of two dates, is left as it is."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

import pytest
from _fakes import call

from lar import Agent
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin.dates import calendar, weekday_name
from lar.types import Code, Notice

REQUESTS = {  # the request, and an answer shape naming a weekday, per language
    "en": ("What day of the week was {d}?", "{d} was a {w}."),
    "pt": ("Que dia da semana foi {d}? Preciso de saber.", "A data {d} foi um {w}."),
    "de": ("Welcher Wochentag war der {d}? Bitte sag es mir.", "Der {d} war ein {w}."),
    "fr": ("Quel jour de la semaine était le {d} ? Dis-le-moi.", "Le {d} était un {w}."),
    "es": ("¿Qué día de la semana fue el {d}? Necesito saberlo.", "El {d} fue un {w}."),
    "zh": ("{d}是星期几？请告诉我。", "{d}那天是{w}。"),
}


def ask(tmp_path: Path, request: str, steps: list[str]) -> object:
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    return Agent(engine=engine, tools=[calendar], workspace=tmp_path).run(request)


@pytest.mark.parametrize("language", sorted(REQUESTS))
def test_a_weekday_the_calendar_did_not_give_is_replaced_by_its_own(
    tmp_path: Path, language: str
) -> None:
    rng = random.Random(f"weekday-{language}")
    for _ in range(6):
        day = date(1950, 1, 1) + timedelta(days=rng.randint(0, 40_000))
        wrong = (day.weekday() + rng.randint(1, 6)) % 7
        request, shape = REQUESTS[language]
        answer = shape.format(d=day.isoformat(), w=weekday_name(wrong, language))
        result = ask(tmp_path, request.format(d=day.isoformat()),
                     [call("calendar", date=day.isoformat()), answer])  # fmt: skip
        right = weekday_name(day.weekday(), language)
        assert result.text == shape.format(d=day.isoformat(), w=right), (  # type: ignore[attr-defined]
            result.text  # type: ignore[attr-defined]
        )
        codes = [e.code for e in result.events if isinstance(e, Notice)]  # type: ignore[attr-defined]
        assert Code.CONTRADICTED_WEEKDAY in codes


def test_a_right_weekday_no_weekday_or_a_span_is_left_as_it_is(tmp_path: Path) -> None:
    day = date(1981, 6, 23)  # a Tuesday
    right = "It was a Tuesday, not a Sunday as some say."
    result = ask(tmp_path, "What day was 1981-06-23?", [call("calendar", date="1981-06-23"), right])
    assert result.text == right  # type: ignore[attr-defined]
    plain = "It was a weekday."
    result = ask(tmp_path, "What day was 1981-06-23?", [call("calendar", date="1981-06-23"), plain])
    assert result.text == plain  # type: ignore[attr-defined]
    span = "From then to 1981-06-30 is 7 days; that one was a Sunday."
    steps = [call("calendar", date=day.isoformat(), until="1981-06-30"), span]
    result = ask(tmp_path, "Days from 1981-06-23 to 1981-06-30?", steps)
    assert result.text == span  # type: ignore[attr-defined]  # a span names two weekdays
    # no calendar result: nothing to hold the answer to
    result = ask(tmp_path, "What day was 1981-06-23?", ["It was a Sunday."])
    assert result.text == "It was a Sunday."  # type: ignore[attr-defined]
