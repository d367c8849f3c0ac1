"""calendar: the day of the week of a date, the days from one date to another, and the date and
time now in a time zone — figures a small model gets wrong in its head (a weekday is a sum over
centuries; a span crosses leap years). Dates are read as people write them, in any language
``dateparser`` knows ("5 de julho de 2034", "29. Mai 1992", "2035年9月15日"), and the result
says how each was read (ISO), so a misread date is seen at once. It reads the clock and nothing
else, so it runs without asking.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from lar.tools.base import ToolContext, tool

__all__ = [
    "calendar",
    "read_date",
    "names_a_date",
    "whole_dates",
    "said_weekday",
    "weekdays_in",
    "weekday_name",
]

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_WORDS = 6
"""The most words a written date takes ("le 1er mai 2031", "17 de março de 1977")."""
_ISO_IN = re.compile(r"(?<!\d)\d{4}-\d{1,2}-\d{1,2}(?!\d)")
_ISO_STRICT = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])")
_CJK_DATE = re.compile(r"\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日")
_YEAR = re.compile(r"[12]\d{3}")
_DAY = re.compile(r"(?<!\d)(?:[1-9]|[12]\d|3[01])(?!\d)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_YEAR_FIRST = frozenset({"zh", "ja", "ko", "hu", "lt"})
"""Languages whose dates of figures alone go year first (CLDR): no day-first reading."""
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _named(day: dt.date, language: str | None = None) -> str:
    """The weekday in English whatever the process's locale (``%A`` follows it), and in
    ``language`` too where ``dateparser``'s locale data names it ("Monday (pt: segunda-feira)"):
    a small model translating the English name itself gets it wrong (measured)."""
    english = _WEEKDAYS[day.weekday()]
    local = _local_weekday(day.weekday(), language) if language else None
    return f"{english} ({language}: {local})" if local else english


def _local_weekday(index: int, language: str) -> str | None:
    try:
        from dateparser.languages.loader import default_loader

        names = default_loader.get_locale(language).info.get(_WEEKDAYS[index].lower(), [])
    except Exception:  # a language dateparser has no data for
        return None
    full = max(names, key=len, default="")  # "segunda-feira" over "seg"
    return full or None


_SAID_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2}) is a (\w+)(?: \((\w+): ([^)]+)\))?")


def said_weekday(result: str) -> tuple[str, int, str | None] | None:
    """The (date, weekday, language) of a ``calendar`` result naming the weekday of one date
    ("1981-06-23 is a Tuesday (pt: terça-feira)"), else None (a span names two)."""
    found = _SAID_DAY.match(result)
    if found is None or found.group(2) not in _WEEKDAYS:
        return None
    return found.group(1), _WEEKDAYS.index(found.group(2)), found.group(3)


def weekdays_in(text: str, languages: set[str]) -> dict[int, tuple[str, str]]:
    """The weekdays ``text`` names in English or ``languages`` (dateparser's names of at least
    four letters, or two CJK characters: "ter" is a Portuguese verb too), each with the words
    as written and their language."""
    found: dict[int, tuple[str, str]] = {}
    for index, english in enumerate(_WEEKDAYS):
        forms = {english: "en"}
        for language in sorted(languages - {"en"}):
            forms |= {n: language for n in _names(index, language) if n not in forms}
        for form in sorted(forms, key=len, reverse=True):
            cjk = bool(_CJK.search(form))
            hit = (
                re.search(re.escape(form), text)
                if cjk
                else re.search(rf"(?<!\w){re.escape(form)}(?!\w)", text, re.IGNORECASE)
            )
            if hit:
                found[index] = (hit.group(0), forms[form])
                break
    return found


def weekday_name(index: int, language: str) -> str:
    """The weekday's full name in ``language`` (dateparser's longest), English where it has
    none."""
    return (
        _local_weekday(index, language) or _WEEKDAYS[index]
        if language != "en"
        else (_WEEKDAYS[index])
    )


def _names(index: int, language: str) -> list[str]:
    try:
        from dateparser.languages.loader import default_loader

        names = default_loader.get_locale(language).info.get(_WEEKDAYS[index].lower(), [])
    except Exception:  # a language dateparser has no data for
        return []
    return [n for n in names if len(n) >= 4 or (_CJK.search(n) and len(n) >= 2)]


def read_date(text: str, now: dt.datetime | None = None, *, day_first: bool = False) -> dt.date:
    """The calendar date ``text`` names: ISO first, then ``dateparser`` on the whole text, then
    the first date found inside it (a date with words around it); "today", "tomorrow" from
    ``now``. ``day_first``: figures alone ("10/05/1970") are read day, month, year, as most
    languages but English write them. ``ValueError`` naming the text when none is found."""
    import dateparser
    from dateparser.search import search_dates

    written = text.strip().strip("\"'“”«»")
    if not written:
        raise ValueError("no date given; write it as YYYY-MM-DD or as the request wrote it")
    iso = _ISO.match(written)
    if iso:
        try:
            return dt.date.fromisoformat(iso.group(0))
        except ValueError:
            raise ValueError(f"{iso.group(0)!r} is not a date in the calendar") from None
    settings: dict[str, object] = {"PREFER_DAY_OF_MONTH": "first"}
    if day_first:
        settings["DATE_ORDER"] = "DMY"
    if now is not None:
        settings["RELATIVE_BASE"] = now
    found = _full_date(written, settings) or dateparser.parse(written, settings=settings)
    if found is None:
        hits = search_dates(written, settings=settings)
        found = hits[0][1] if hits else None
    if found is None:
        raise ValueError(f"cannot read {text!r} as a date; write it as YYYY-MM-DD")
    day: dt.date = found.date()
    return day


def _full_date(text: str, settings: dict[str, object]) -> dt.datetime | None:
    """The longest run of words in ``text`` that is a whole date (day, month and year, the day
    and year written as figures in it), so words around it ("o dia 17 de março de 1977")
    neither hide it nor become part of it."""
    import dateparser

    words = [w.strip("?!,;:¿¡()\"'“”«»") for w in text.split()]
    words = [w for w in words if w]
    strict = {**settings, "STRICT_PARSING": True}
    for size in range(min(len(words), _MAX_WORDS), 0, -1):
        for start in range(len(words) - size + 1):
            run = " ".join(words[start : start + size])
            if not re.search(r"\d", run):
                continue
            found: dt.datetime | None = dateparser.parse(run, settings=strict)
            figures = {int(f) for f in re.findall(r"\d+", run)}
            if found is not None and {found.year, found.day} <= figures:
                return found  # a date made up around a stray word has figures of its own
    return None


def whole_dates(text: str) -> list[dt.date]:
    """The whole dates written in figures in ``text`` (ISO 1961-04-13 with two-figure month
    and day — 2024-1-5 is a subtraction —, CJK 1961年4月13日), in order, each once; what is
    not a real day (2023-02-30) is left out."""
    found: list[dt.date] = []
    for m in (*_ISO_STRICT.finditer(text), *_CJK_DATE.finditer(text)):
        y, mo, d = (int(f) for f in re.findall(r"\d+", m.group(0)))
        try:
            day = dt.date(y, mo, d)
        except ValueError:
            continue
        if day not in found:
            found.append(day)
    return found


def names_a_date(text: str) -> bool:
    """Whether ``text`` names a whole calendar date: ISO (1994-10-05), CJK (1953年2月5日), or
    a run of up to five words ending in a year with a day among its figures that ``dateparser``
    reads strictly in any language it knows ("2 de outubro de 1966", "July 19, 2002",
    "31. Oktober 1989"). Only runs with a day figure before a year are parsed, so a request
    without a date costs a regular expression (a date's gate for ``calendar``)."""
    if _ISO_IN.search(text) or _CJK_DATE.search(text):
        return True
    words = [w.strip("?!,;:¿¡()\"'“”«»") for w in text.split()][:400]
    strict = {"STRICT_PARSING": True, "PREFER_DAY_OF_MONTH": "first"}
    for end, word in enumerate(words):
        if not _YEAR.fullmatch(word):
            continue
        for start in range(max(0, end - _MAX_WORDS + 2), end):
            run = " ".join(w for w in words[start : end + 1] if w)
            if not _DAY.search(" ".join(words[start:end])):
                continue
            import dateparser  # imported only for a request with a day and a year in it

            found: dt.datetime | None = dateparser.parse(run, settings=strict)
            if found is not None and {found.year, found.day} <= {
                int(f) for f in re.findall(r"\d+", run)
            }:
                return True
    return False


def _zone(name: str, ctx: ToolContext) -> ZoneInfo | None:
    chosen = name.strip() or ctx.timezone or ""
    if not chosen:
        return None
    try:
        return ZoneInfo(chosen)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r}; write an IANA name such as Europe/Lisbon, "
            "America/New_York or Asia/Tokyo"
        ) from None


@tool(read_only=True, broad=True)
def calendar(ctx: ToolContext, date: str = "today", until: str = "", zone: str = "") -> str:
    """Weekday of a date, days between two dates, or today's date and time in a time zone.

    Args:
        date: A date as the request writes it ("May 29, 1992", "2035-09-15"), or "today".
        until: A second date: the days from date to it are counted.
        zone: An IANA time zone (Europe/Lisbon) for today and the time now there.
    """
    tz = _zone(zone, ctx)
    now = dt.datetime.now(tz)
    base = now.replace(tzinfo=None)
    lang = ctx.language
    day_first = lang is not None and lang not in _YEAR_FIRST
    first = read_date(date, base, day_first=day_first)
    said = f"{first.isoformat()} is a {_named(first, lang)}"
    if until.strip():
        second = read_date(until, base, day_first=day_first)
        said = (
            f"from {first.isoformat()} ({_named(first, lang)}) to {second.isoformat()} "
            f"({_named(second, lang)}): {(second - first).days} days"
        )
    if first == now.date() or zone.strip():
        where = f" in {tz.key}" if tz is not None else ""
        said += f"; now{where}: {_named(now.date(), lang)} {now:%Y-%m-%d %H:%M} (UTC{now:%z})"
    return said


calendar.offered = names_a_date
