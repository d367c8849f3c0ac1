"""Schedule expressions: every form read, words checked against the clock time they name."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from lar.scheduler.when import ScheduleError, next_due, parse_schedule

TZ = ZoneInfo("Europe/Lisbon")
NOW = datetime(2026, 12, 4, 15, 30, tzinfo=TZ)  # a Friday


def due(text: str, now: datetime = NOW) -> datetime:
    s = parse_schedule(text, now=now)
    at = next_due(s, after=now.timestamp(), start=now.timestamp(), tz=TZ)
    assert at is not None
    return datetime.fromtimestamp(at, TZ)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0 9 * * 1-5", datetime(2026, 12, 7, 9, 0, tzinfo=TZ)),  # Monday
        ("daily 09:00", datetime(2026, 12, 5, 9, 0, tzinfo=TZ)),
        ("every day at 6pm", datetime(2026, 12, 4, 18, 0, tzinfo=TZ)),
        ("weekly mon 08:30", datetime(2026, 12, 7, 8, 30, tzinfo=TZ)),
        ("every sunday at 10am", datetime(2026, 12, 6, 10, 0, tzinfo=TZ)),
        ("monthly 1 09:00", datetime(2027, 1, 1, 9, 0, tzinfo=TZ)),
        ("every 2h", datetime(2026, 12, 4, 17, 30, tzinfo=TZ)),
        ("every_3h", datetime(2026, 12, 4, 18, 30, tzinfo=TZ)),
        ("every 30 minutes", datetime(2026, 12, 4, 16, 0, tzinfo=TZ)),
        ("once 2026-12-24 18:00", datetime(2026, 12, 24, 18, 0, tzinfo=TZ)),
        ("2026-12-24T18:00", datetime(2026, 12, 24, 18, 0, tzinfo=TZ)),
        ("tomorrow at 9am", datetime(2026, 12, 5, 9, 0, tzinfo=TZ)),
        ("demain à 9h", datetime(2026, 12, 5, 9, 0, tzinfo=TZ)),
        ("in 10 minutes", datetime(2026, 12, 4, 15, 40, tzinfo=TZ)),
    ],
)
def test_each_form_gives_its_next_due_time(text: str, expected: datetime) -> None:
    assert due(text) == expected


def test_a_time_in_words_read_as_another_clock_time_is_refused_not_scheduled() -> None:
    # dateparser reads this Portuguese one-off as 00:30 of the day after: the 9 it names is lost.
    with pytest.raises(ScheduleError, match="not the 09:00 it names"):
        parse_schedule("amanhã às 9h", now=NOW)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("61 9 * * *", "not a valid cron expression"),
        ("daily 25:00", "not a time of day"),
        ("every 10s", "cannot read"),
        ("every 0h", "shortest period"),
        ("once 2025-01-01 09:00", "has passed"),
        ("whenever you feel like it", "cannot read"),
        ("", "empty schedule"),
    ],
)
def test_a_bad_expression_is_a_clear_error_quoting_it(text: str, problem: str) -> None:
    with pytest.raises(ScheduleError, match=problem) as caught:
        parse_schedule(text, now=NOW)
    if text:
        assert repr(text) in str(caught.value)  # the value at fault is quoted


def test_cron_follows_the_zone_across_a_daylight_saving_change() -> None:
    before = datetime(2027, 3, 26, 12, 0, tzinfo=TZ)  # Lisbon moves to WEST on 28 March, 01:00
    s = parse_schedule("daily 09:00", now=before)
    first = next_due(s, after=before.timestamp(), start=before.timestamp(), tz=TZ)
    assert first is not None
    second = next_due(s, after=first, start=before.timestamp(), tz=TZ)
    assert second is not None
    assert datetime.fromtimestamp(second, TZ).hour == 9
    assert second - first == 23 * 3600
