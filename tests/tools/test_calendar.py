"""calendar: weekdays and spans computed, never guessed; dates read in the languages Lar's users
write; a date it cannot read is an error naming it, never a made-up day."""

from __future__ import annotations

import asyncio
import random
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from lar.evals.draws.locale import long_date
from lar.tools.base import ToolContext
from lar.tools.builtin.dates import calendar, names_a_date, read_date
from lar.tools.executor import ToolExecutor, offered_for
from lar.types import ToolCall, ToolResult

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def run(
    ws: Path, timezone: str | None = None, language: str | None = None, **args: object
) -> ToolResult:
    asked: list[str] = []

    def approver(call: ToolCall, tool: object) -> bool:
        asked.append(call.name)
        return False

    executor = ToolExecutor([calendar], approver=approver)
    try:
        ctx = ToolContext(workspace=ws, timezone=timezone, language=language)
        result = asyncio.run(executor.run(ToolCall("c", "calendar", dict(args)), ctx))
    finally:
        executor.close()
    assert asked == []  # reads the clock only: nobody is asked
    return result


@pytest.mark.parametrize("lang", ["en", "pt", "es", "de", "fr", "zh"])
def test_dates_written_out_in_each_language_are_read_as_that_day(lang: str) -> None:
    rng = random.Random(f"calendar-{lang}")
    for _ in range(25):
        day = date(1950, 1, 1) + timedelta(days=rng.randint(0, 120 * 365))
        assert read_date(long_date(day, lang)) == day, long_date(day, lang)
        assert read_date(day.isoformat()) == day


def test_a_date_inside_words_is_found() -> None:
    assert read_date("el 3 de marzo de 2001") == date(2001, 3, 3)
    assert read_date("on 2024-02-29, please") == date(2024, 2, 29)
    # words around a date neither hide it nor make a date of their own ("o dia", "semana")
    assert read_date("o dia 17 de março de 1977") == date(1977, 3, 17)
    assert read_date("Em que dia da semana cai o dia 5 de julho de 2034?") == date(2034, 7, 5)


def test_weekday_and_span_are_computed(tmp_path: Path) -> None:
    rng = random.Random(7)
    for _ in range(20):
        first = date(1900, 1, 1) + timedelta(days=rng.randint(0, 60_000))
        second = first + timedelta(days=rng.randint(-3000, 3000))
        one = run(tmp_path, date=first.isoformat())
        assert one.ok and one.content == f"{first.isoformat()} is a {WEEKDAYS[first.weekday()]}"
        span = run(tmp_path, date=first.isoformat(), until=second.isoformat())
        assert span.ok
        assert f": {(second - first).days} days" in span.content
        assert f"({WEEKDAYS[second.weekday()]})" in span.content


def test_today_in_a_zone_reads_the_clock_there(tmp_path: Path) -> None:
    result = run(tmp_path, zone="Asia/Tokyo")
    now = datetime.now(ZoneInfo("Asia/Tokyo"))
    assert result.ok
    assert "now in Asia/Tokyo:" in result.content and "UTC+0900" in result.content
    assert now.strftime("%Y-%m-%d") in result.content or (
        (now - timedelta(minutes=1)).strftime("%Y-%m-%d") in result.content
    )
    # no zone given: the user's (scheduler.timezone)
    mine = run(tmp_path, timezone="America/Sao_Paulo", date="today")
    assert mine.ok and "now in America/Sao_Paulo:" in mine.content


def test_what_it_cannot_read_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = run(tmp_path, date="the day after the flood")
    assert not bad.ok and "the day after the flood" in bad.content
    assert "YYYY-MM-DD" in bad.content
    invalid = run(tmp_path, date="2023-02-30")
    assert not invalid.ok and "2023-02-30" in invalid.content
    zone = run(tmp_path, zone="Mars/Olympus")
    assert not zone.ok and "Mars/Olympus" in zone.content and "IANA" in zone.content


def test_it_is_in_the_default_set_and_can_be_left_out(lar_home: Path) -> None:
    from lar.agents import gather_tools
    from lar.config import load_config
    from lar.errors import ConfigError

    found = gather_tools(load_config(), mcp=False)
    try:
        assert "calendar" in {t.name for t in found.tools}
    finally:
        found.close()
    # `tools.extra: [calendar]`, from when it was optional, is taken as already there
    (lar_home / "config.yaml").write_text(
        "tools:\n  extra: [calendar]\n  without: [convert_units]\n"
    )
    found = gather_tools(load_config(), mcp=False)
    try:
        names = [t.name for t in found.tools]
        assert names.count("calendar") == 1 and "convert_units" not in names
    finally:
        found.close()
    (lar_home / "config.yaml").write_text("tools:\n  without: [calendar]\n")
    found = gather_tools(load_config(), mcp=False)
    try:
        assert "calendar" not in {t.name for t in found.tools}
    finally:
        found.close()
    (lar_home / "config.yaml").write_text("tools:\n  without: [calender]\n")
    with pytest.raises(ConfigError) as err:
        gather_tools(load_config(), mcp=False)
    message = str(err.value)
    assert "tools.without" in message and "'calender'" in message and "calculate" in message
    assert str(lar_home / "config.yaml") in message


@pytest.mark.parametrize("lang", ["en", "pt", "es", "de", "fr", "zh"])
def test_a_request_naming_a_date_in_any_language_is_seen_to_name_one(lang: str) -> None:
    from lar.evals.draws.reckoning import dates

    rng = random.Random(f"gate-{lang}")
    for _ in range(12):
        day = date(1950, 1, 1) + timedelta(days=rng.randint(0, 120 * 365))
        assert names_a_date(f"{long_date(day, lang)} ?"), long_date(day, lang)
        assert names_a_date(f"… {day.isoformat()} …")
    for _ in range(6):  # the draws' own date questions, both kinds
        assert names_a_date(dates(rng, lang).request)


def test_a_request_without_a_date_is_not_seen_to_name_one() -> None:
    rng = random.Random(11)
    for _ in range(30):  # figures that look like years, days, amounts — no date among them
        year, small = rng.randint(1000, 2999), rng.randint(1, 31)
        assert not names_a_date(f"Split {year} euros between {small} people")
        assert not names_a_date(f"Sum the {small} figures in report-{year}.csv")
    assert not names_a_date("What version is this project? Read pyproject.toml")
    assert not names_a_date("Renew the passport in March 2027")  # a month, no day


def test_a_gated_tool_is_listed_last_and_only_for_a_request_its_gate_fits() -> None:
    from lar.tools.builtin import builtin_tools

    tools = builtin_tools()
    plain = offered_for(tools, "How many lines are in todo.txt?")
    assert calendar not in plain and [t for t in tools if t.offered is None] == plain
    dated = offered_for(tools, "How many days from 2001-03-04 to 2002-01-01?")
    assert dated == [*plain, calendar]  # the same listing, the gated tool after it


def test_the_model_is_shown_calendar_only_for_a_request_naming_a_date(tmp_path: Path) -> None:
    from lar.agents import Agent
    from lar.engines.scripted import ScriptedEngine
    from lar.tools.builtin import builtin_tools

    def listed(request: str) -> tuple[str, str]:
        engine = ScriptedEngine(["Done."])
        Agent(engine=engine, tools=builtin_tools(), workspace=tmp_path).run(request)
        return engine.calls[0][0].content, engine.calls[0][-1].content

    plain, _ = listed("How many lines are in todo.txt?")
    dated, asked = listed("Quantos dias se passam de 1 de junho de 1966 até 2 de outubro de 1966?")
    assert "calendar" not in plain and "calendar(" in dated and "1966" in asked
    # the listing without a date is the start of the one with it: a prompt cache keeps it
    head = plain[: plain.index("calculate(")]
    assert dated.startswith(head)


def test_the_weekday_is_named_in_the_requests_language_too(tmp_path: Path) -> None:
    from lar.evals.draws.locale import WEEKDAYS as NAMES

    rng = random.Random(12)
    for lang in ("pt", "es", "de", "fr", "zh"):
        for _ in range(4):
            day = date(1950, 1, 1) + timedelta(days=rng.randint(0, 100 * 365))
            said = run(tmp_path, language=lang, date=day.isoformat()).content
            english = WEEKDAYS[day.weekday()]
            assert said.startswith(f"{day.isoformat()} is a {english} ({lang}: "), said
            local = said.partition(f"({lang}: ")[2].rstrip(")")
            assert any(n.casefold() in local.casefold() for n in NAMES[lang][day.weekday()])
    # figures alone are read day first outside English, month first in it
    assert run(tmp_path, language="fr", date="10/05/1970").content.startswith("1970-05-10")
    assert run(tmp_path, date="10/05/1970").content.startswith("1970-10-05")
    assert run(tmp_path, language="zh", date="2008/05/09").content.startswith("2008-05-09")


def test_a_run_tells_its_tools_the_requests_language(tmp_path: Path) -> None:
    from lar.agents import Agent
    from lar.engines.scripted import ScriptedEngine
    from lar.tools.base import tool

    seen: list[str | None] = []

    @tool
    def peek(ctx: ToolContext) -> str:
        """Look."""
        seen.append(ctx.language)
        return "ok"

    call = '<tool_call>{"name": "peek", "arguments": {}}</tool_call>'
    for request in ("Que dia da semana é 11 de maio de 2015, por favor?",
                    "Which weekday was the eleventh of May 2015, please?"):  # fmt: skip
        engine = ScriptedEngine([call, "It is a Monday."], repeat_last=True)
        Agent(engine=engine, tools=[peek], workspace=tmp_path).run(request)
    assert seen == ["pt", None]


def test_dates_given_to_calculate_are_an_error_naming_the_calendar_call_that_counts_them(
    tmp_path: Path,
) -> None:
    from lar.tools.builtin.calc import calculate

    rng = random.Random(45)
    for _ in range(12):
        a = date(1950, 1, 1) + timedelta(days=rng.randint(0, 40_000))
        b = a + timedelta(days=rng.randint(1, 5000))
        executor = ToolExecutor([calculate, calendar], approver=lambda *_: False)
        ctx = ToolContext(workspace=tmp_path)
        try:
            wrong = ToolCall("c", "calculate", {"expression": f"{b.isoformat()} - {a.isoformat()}"})
            result = asyncio.run(executor.run(wrong, ctx))
            assert not result.ok and result.error is not None
            named = f'calendar(date="{a.isoformat()}", until="{b.isoformat()}")'
            assert named in result.error.detail, result.error.detail
            # the call it names counts the span
            right = ToolCall("d", "calendar", {"date": a.isoformat(), "until": b.isoformat()})
            counted = asyncio.run(executor.run(right, ctx))
            assert f": {(b - a).days} days" in counted.content
        finally:
            executor.close()
    ok = run_calc(tmp_path, "2024 - 12 - 5")  # figures with spaces are arithmetic still
    assert "= 2007" in ok


def run_calc(ws: Path, expression: str) -> str:
    from lar.tools.builtin.calc import calculate

    executor = ToolExecutor([calculate], approver=lambda *_: False)
    try:
        ctx = ToolContext(workspace=ws)
        return asyncio.run(
            executor.run(ToolCall("c", "calculate", {"expression": expression}), ctx)
        ).content
    finally:
        executor.close()


def test_figures_that_only_look_like_dates_are_still_worked_out(tmp_path: Path) -> None:
    (tmp_path / "sales-2024-01-05.csv").write_text("amount\n12.5\n7.5\n")
    assert "= 20" in run_calc(tmp_path, "sum(sales-2024-01-05.csv)")  # a file named by date
    assert "= 2018" in run_calc(tmp_path, "2024-1-5")  # one-figure month and day: arithmetic
