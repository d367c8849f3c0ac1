"""Time windows named in questions."""

from __future__ import annotations

from datetime import datetime

import pytest

from lar.memory.when import time_window

NOW = datetime(2026, 6, 30, 12).timestamp()  # a Tuesday


def day(y: int, m: int, d: int) -> float:
    return datetime(y, m, d).timestamp()


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what did I cook on 2026-03-14?", day(2026, 3, 14), day(2026, 3, 15)),
        ("what did I cook on March 14?", day(2026, 3, 14), day(2026, 3, 15)),
        ("what did I cook on 21 March?", day(2026, 3, 21), day(2026, 3, 22)),
        ("on the 9th of march", day(2026, 3, 9), day(2026, 3, 10)),
        ("Dec 3rd", day(2025, 12, 3), day(2025, 12, 4)),  # no year: the last one before now
        ("June 5, 2024", day(2024, 6, 5), day(2024, 6, 6)),
        ("how was I sleeping in March?", day(2026, 3, 1), day(2026, 4, 1)),
        ("back in December", day(2025, 12, 1), day(2026, 1, 1)),
        ("yesterday", day(2026, 6, 29), day(2026, 6, 30)),
        ("last week", day(2026, 6, 22), day(2026, 6, 29)),
        ("this week", day(2026, 6, 29), day(2026, 7, 6)),
        ("last month", day(2026, 5, 1), day(2026, 6, 1)),
        ("3 days ago", day(2026, 6, 27), day(2026, 6, 28)),
        ("two weeks ago", day(2026, 6, 15), day(2026, 6, 22)),
        ("on Friday", day(2026, 6, 26), day(2026, 6, 27)),
        ("last Tuesday", day(2026, 6, 23), day(2026, 6, 24)),
    ],
)
def test_windows(text: str, start: float, end: float) -> None:
    assert time_window(text, NOW) == (start, end)


@pytest.mark.parametrize(
    "text", ["where do I work?", "I may go", "February 30", "2026-02-31", "the march of time"]
)
def test_no_window(text: str) -> None:
    assert time_window(text, NOW) is None
