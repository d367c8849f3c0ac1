"""Time windows named in a question ("on March 14", "in April", "last week", "3 days ago").

Recall uses the window to rank memories written in that span: neither BM25 nor vectors can
answer "what did I cook on March 14?" when the memory itself never says the date. Only the
forms below are understood; anything else yields no window and recall works as usual.
Dates are local time; a month or day without a year is the most recent one not after ``now``.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

__all__ = ["time_window"]

_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a": 1, "an": 1}

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}", re.I)
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b{_YEAR}", re.I)
_IN_MONTH = re.compile(
    rf"\b(?:in|during|of|early|late|mid|back in)\s+(?:-\s*)?{_MONTH}\b{_YEAR}", re.I
)
_AGO = re.compile(r"\b(\d+|one|two|three|four|five|six|a|an)\s+(day|week|month)s?\s+ago\b", re.I)
_RELATIVE = re.compile(
    r"\b(yesterday|today|last week|this week|last weekend|last month|this month|last year)\b", re.I
)
_WEEKDAY = re.compile(r"\b(?:on|last)\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I)


def _ts(d: date) -> float:
    return datetime(d.year, d.month, d.day).timestamp()


def _span(start: date, days: int) -> tuple[float, float]:
    return _ts(start), _ts(start + timedelta(days=days))


def _past(month: int, day: int, year: str | None, today: date) -> date | None:
    try:
        if year:
            return date(int(year), month, day)
        d = date(today.year, month, day)
        return d if d <= today else date(today.year - 1, month, day)
    except ValueError:
        return None


def _month_span(month: int, year: str | None, today: date) -> tuple[float, float]:
    y = int(year) if year else (today.year if month <= today.month else today.year - 1)
    start = date(y, month, 1)
    end = date(y + (month == 12), month % 12 + 1, 1)
    return _ts(start), _ts(end)


def time_window(text: str, now: float) -> tuple[float, float] | None:
    """The [start, end) span of local time the text refers to, or None."""
    today = datetime.fromtimestamp(now).date()
    if m := _ISO.search(text):
        try:
            return _span(date(int(m[1]), int(m[2]), int(m[3])), 1)
        except ValueError:
            return None
    if m := _MONTH_DAY.search(text):
        d = _past(_MONTHS[m[1].lower()], int(m[2]), m[3], today)
        return _span(d, 1) if d else None
    if m := _DAY_MONTH.search(text):
        d = _past(_MONTHS[m[2].lower()], int(m[1]), m[3], today)
        return _span(d, 1) if d else None
    if m := _IN_MONTH.search(text):
        return _month_span(_MONTHS[m[1].lower()], m[2], today)
    if m := _AGO.search(text):
        n = int(m[1]) if m[1].isdigit() else _NUMBERS[m[1].lower()]
        unit = m[2].lower()
        if unit == "day":
            return _span(today - timedelta(days=n), 1)
        if unit == "week":
            start = today - timedelta(days=today.weekday() + 7 * n)
            return _span(start, 7)
        back = today.month - 1 - n
        return _month_span(back % 12 + 1, str(today.year + back // 12), today)
    if m := _RELATIVE.search(text):
        word = m[1].lower()
        monday = today - timedelta(days=today.weekday())
        spans = {
            "yesterday": lambda: _span(today - timedelta(days=1), 1),
            "today": lambda: _span(today, 1),
            "this week": lambda: _span(monday, 7),
            "last week": lambda: _span(monday - timedelta(days=7), 7),
            "last weekend": lambda: _span(monday - timedelta(days=2), 2),
            "this month": lambda: _month_span(today.month, str(today.year), today),
            "last month": lambda: _month_span(
                (today.month - 2) % 12 + 1, str(today.year - (today.month == 1)), today
            ),
            "last year": lambda: (_ts(date(today.year - 1, 1, 1)), _ts(date(today.year, 1, 1))),
        }
        return spans[word]()
    if m := _WEEKDAY.search(text):
        back = (today.weekday() - _WEEKDAYS.index(m[1].lower())) % 7 or 7
        return _span(today - timedelta(days=back), 1)
    return None
