"""When a job is due: schedule expressions, read strictly, and the next due time (I4).

Forms (case-insensitive), all in the user's time zone:

- a cron expression of five fields: ``0 9 * * 1-5`` (croniter)
- ``daily 09:00``, ``weekly mon 09:00``, ``monthly 1 09:00`` (kept as their cron form)
- ``every 2h`` / ``every 30m`` / ``every_2h`` / ``every 2 hours``: from the moment the job is made
- ``once 2026-12-05 09:00`` or an ISO date and time alone
- a one-off in words, read by ``dateparser`` in many languages: ``tomorrow at 9am``,
  ``demain à 9h``, ``in 10 minutes``

Words are where a wrong reading would set a reminder at the wrong time without anyone noticing,
so a reading is kept only when the clock time written in the text is the one read
("amanhã às 9h" read as 00:30 is refused with the forms that work, never scheduled). Why croniter
and not APScheduler: Lar needs only "the next time after t" for an expression; the running, the
claiming (never twice for one due time across processes) and the persistence are Lar's own, in
``lar.db`` (lar.scheduler.jobs), because APScheduler 3's job stores do not coordinate two
processes sharing one store.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from lar.errors import LarError

__all__ = [
    "FORMS",
    "Schedule",
    "ScheduleError",
    "next_due",
    "parse_schedule",
    "spec_problem",
    "zone",
]

FORMS = (
    "a cron expression ('0 9 * * 1-5'), 'daily 09:00', 'weekly mon 09:00', 'monthly 1 09:00', "
    "'every 2h', 'once 2026-12-05 09:00', or a one-off in words ('tomorrow at 9am')"
)

Kind = Literal["cron", "every", "once"]
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?"
_DAILY = re.compile(rf"^(?:daily|every day)(?: at)? {_CLOCK}$")
_WEEKLY = re.compile(rf"^(?:weekly|every) ({'|'.join(_DAYS)})[a-z]*(?: at)? {_CLOCK}$")
_MONTHLY = re.compile(rf"^monthly (\d{{1,2}})(?: at)? {_CLOCK}$")
_EVERY = re.compile(r"^every[ _]?(\d+) ?(m|min|mins|minutes?|h|hrs?|hours?|d|days?)$")
_ONCE = re.compile(r"^(?:once |at )?(\d{4}-\d{2}-\d{2})[ t](\d{1,2}:\d{2})$")
_WRITTEN_CLOCK = re.compile(r"\b(\d{1,2})(?:[:h.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|h\b|uhr\b)?")
_UNITS = {"m": 60, "h": 3600, "d": 86400}
MIN_EVERY_S = 60
MAX_EVERY_S = 10 * 366 * 86400
"""A period longer than 10 years is refused: no one means it, and its due times run past what
a date can hold ("every 999999999999h")."""


class ScheduleError(LarError):
    """A schedule expression Lar cannot read; the message quotes it and lists the forms."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A read expression: ``spec`` is its stored form (``cron 0 9 * * *``, ``every 7200``,
    ``once 1796288400``); ``said`` what the user wrote."""

    kind: Kind
    spec: str
    said: str

    @property
    def recurring(self) -> bool:
        return self.kind != "once"

    def describe(self, tz: ZoneInfo) -> str:
        if self.kind == "once":
            return "once"
        if self.kind == "every":
            seconds = int(self.spec.split()[1])
            unit = next((u for u, s in (("d", 86400), ("h", 3600)) if seconds % s == 0), "m")
            return f"every {seconds // _UNITS[unit]}{unit}"
        return "cron " + self.spec.split(" ", 1)[1]


def zone(name: str | None) -> ZoneInfo:
    """The named IANA zone, or this machine's (tzlocal, which honours ``TZ``)."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # "Europe" is a folder of zones
            raise ScheduleError(
                f"unknown time zone {name!r}: use an IANA name such as 'Europe/Lisbon'"
            ) from None
    import tzlocal

    found = tzlocal.get_localzone()
    return found if isinstance(found, ZoneInfo) else ZoneInfo(str(found))


def _show(moment: datetime) -> str:
    return moment.strftime("%a %Y-%m-%d %H:%M %Z").strip()


def _hour(hour: str, minute: str | None, half: str | None, said: str) -> tuple[int, int]:
    h, m = int(hour), int(minute or 0)
    if half:
        if not 1 <= h <= 12:
            raise ScheduleError(f"{said!r}: {h}{half} is not a time of day")
        h = h % 12 + (12 if half == "pm" else 0)
    if h > 23 or m > 59:
        raise ScheduleError(f"{said!r}: {hour}:{minute or '00'} is not a time of day")
    return h, m


def _cron(expr: str, said: str, now: datetime) -> Schedule:
    from croniter import croniter

    if len(expr.split()) != 5 or not croniter.is_valid(expr):  # a sixth field is seconds
        raise ScheduleError(f"{said!r} is not a valid cron expression of five fields; use {FORMS}")
    schedule = Schedule("cron", "cron " + expr, said)
    problem = spec_problem(schedule.spec, said, now=now)
    if problem is not None:
        raise ScheduleError(f"{problem}, so it would never fire; use {FORMS}")
    return schedule


def spec_problem(spec: str, said: str = "", *, now: datetime | None = None) -> str | None:
    """Why a stored schedule can never be kept, or None: a cron expression no date matches
    (``0 0 30 2 *``), a period longer than ``MAX_EVERY_S``, a form Lar did not write. ``now``
    (aware) is where a cron expression's next time is looked for (default: the present)."""
    shown = said or spec
    kind, _, rest = spec.partition(" ")
    try:
        if kind == "every":
            seconds = float(rest)
            if seconds > MAX_EVERY_S:
                return f"{shown!r}: longer than 10 years apart"
            if not seconds >= MIN_EVERY_S:  # also NaN
                return f"{shown!r}: shorter than a minute apart"
        elif kind == "once":
            datetime.fromtimestamp(float(rest))
        elif kind == "cron":
            from croniter import CroniterError, croniter

            try:
                croniter(rest, now or datetime.now().astimezone()).get_next(datetime)
            except (CroniterError, ValueError):
                return f"{shown!r} matches no date"
        else:
            return f"stored schedule {spec!r} is not one Lar wrote"
    except (ValueError, OverflowError, OSError):
        return f"stored schedule {spec!r} is not one Lar wrote"
    return None


def parse_schedule(text: str, *, now: datetime) -> Schedule:
    """Read ``text``; ``now`` (aware, in the user's zone) anchors words like "tomorrow".

    Raises :class:`ScheduleError` quoting the text and the accepted forms.
    """
    said = text.strip()
    low = re.sub(r"\s+", " ", said.lower())
    if not low:
        raise ScheduleError(f"empty schedule; use {FORMS}")
    fields = low.split(" ")
    if len(fields) == 5 and all(re.fullmatch(r"[\d*/,\-a-z?]+", f) for f in fields):
        from croniter import croniter

        # Only digits and cron's signs: meant as cron, so an invalid one is said to be so.
        if croniter.is_valid(low) or all(re.fullmatch(r"[\d*/,\-?]+", f) for f in fields):
            return _cron(low, said, now)
    if low.startswith("cron "):
        return _cron(low[5:], said, now)
    if m := _DAILY.match(low):
        h, mi = _hour(m[1], m[2], m[3], said)
        return _cron(f"{mi} {h} * * *", said, now)
    if m := _WEEKLY.match(low):
        h, mi = _hour(m[2], m[3], m[4], said)
        return _cron(f"{mi} {h} * * {(_DAYS.index(m[1]) + 1) % 7}", said, now)
    if m := _MONTHLY.match(low):
        h, mi = _hour(m[2], m[3], m[4], said)
        if not 1 <= int(m[1]) <= 31:
            raise ScheduleError(f"{said!r}: day {m[1]} is not a day of the month")
        return _cron(f"{mi} {h} {int(m[1])} * *", said, now)
    if m := _EVERY.match(low):
        seconds = int(m[1]) * _UNITS[m[2][0]]
        if seconds < MIN_EVERY_S:
            raise ScheduleError(f"{said!r}: the shortest period is one minute")
        if seconds > MAX_EVERY_S:
            raise ScheduleError(f"{said!r}: the longest period is 10 years; use {FORMS}")
        return Schedule("every", f"every {seconds}", said)
    if m := _ONCE.match(low):
        try:
            at = datetime.fromisoformat(f"{m[1]}T{int(m[2].split(':')[0]):02d}:{m[2][-2:]}")
        except ValueError:
            raise ScheduleError(f"{said!r} is not a date and time; use {FORMS}") from None
        return _once(at.replace(tzinfo=now.tzinfo), said, now)
    return _once(_in_words(said, now), said, now)


def _once(at: datetime, said: str, now: datetime) -> Schedule:
    if at <= now:
        raise ScheduleError(f"{said!r} is {_show(at)}, which has passed (now {_show(now)})")
    return Schedule("once", f"once {int(at.timestamp())}", said)


def _in_words(said: str, now: datetime) -> datetime:
    import dateparser

    settings = {
        "PREFER_DATES_FROM": "future",
        "RELATIVE_BASE": now.replace(tzinfo=None),
        "TIMEZONE": str(now.tzinfo),
        "TO_TIMEZONE": str(now.tzinfo),
        "RETURN_AS_TIMEZONE_AWARE": True,
    }
    found: datetime | None = dateparser.parse(said, settings=settings)
    if found is None:
        raise ScheduleError(f"cannot read {said!r} as a time; use {FORMS}")
    written = _WRITTEN_CLOCK.search(said.lower())
    if written and (written[2] or written[3]):
        half = {"a.m.": "am", "p.m.": "pm"}.get(written[3] or "", written[3])
        h, m = _hour(written[1], written[2], half if half in ("am", "pm") else None, said)
        if (found.hour, found.minute) != (h, m) or found.date() < now.date():
            raise ScheduleError(
                f"{said!r} was read as {_show(found)}, not the {h:02d}:{m:02d} it names; "
                f"write it as 'once YYYY-MM-DD HH:MM' (today is {_show(now)})"
            )
    return found.astimezone(now.tzinfo)


def next_due(schedule: Schedule, *, after: float, start: float, tz: ZoneInfo) -> float | None:
    """The first due time strictly after ``after`` (epoch seconds); None when there is none
    (a one-off whose time has passed). ``start`` anchors ``every`` schedules."""
    kind, _, rest = schedule.spec.partition(" ")
    if kind == "once":
        at = float(rest)
        return at if at > after else None
    if kind == "every":
        period = float(rest)
        steps = max(1, math.floor((after - start) / period) + 1)
        return start + steps * period
    from croniter import croniter

    base = datetime.fromtimestamp(after, tz)
    following: datetime = croniter(rest, base).get_next(datetime)
    if following.timestamp() <= after:  # pragma: no cover - croniter is strictly after
        following += timedelta(minutes=1)
    return following.timestamp()


def read_spec(spec: str, said: str = "") -> Schedule:
    """A stored ``spec`` back as a :class:`Schedule`."""
    kind = spec.split(" ", 1)[0]
    if kind not in ("cron", "every", "once"):
        raise ScheduleError(f"stored schedule {spec!r} is not one Lar wrote")
    return Schedule(kind, spec, said or spec)  # type: ignore[arg-type]
