"""Everyday requests on the embedded model (issue 18, Must show 2 and 3): a refused call is
explained with how to allow it, a question no tool can answer gets no invented figures, and a
sum is computed by a tool, not in the model's head."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lar import Agent
from lar.tools import builtin_tools

CANNOT = ("can't", "cannot", "could not", "couldn't", "unable", "not able", "don't have",
          "do not have", "no access", "not available", "unavailable", "unknown")  # fmt: skip


def test_a_denied_write_says_which_permission_and_how_to_give_it(
    lar_home: Path, tmp_path: Path
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "lar", "run", "--no-memory",
         'Create a file called plan.txt with the text "call the bank".'],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "plan.txt").exists()
    assert "needs your permission" in out.stdout and "--yes" in out.stdout, out.stdout
    assert "do not retry" not in out.stdout.lower()  # the hint was for the model


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network at all: names other than localhost do not resolve (the conftest's guard
    already refuses connections beyond loopback)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if str(host) not in ("localhost", "127.0.0.1", "::1"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_the_weather_with_no_weather_tool_and_no_network_is_not_invented(
    lar_home: Path, tmp_path: Path, offline: None
) -> None:
    with Agent(tools=builtin_tools(), workspace=tmp_path, approver=lambda c, t: False) as agent:
        result = agent.run("What's the weather in Lisbon?")
    text = result.text
    assert not re.search(r"\d{2}", text), text  # no temperature, humidity or wind speed
    assert any(word in text.lower() for word in CANNOT), text


def test_the_sum_of_a_files_numbers_is_computed_by_a_tool(lar_home: Path, tmp_path: Path) -> None:
    (tmp_path / "numbers.txt").write_text("3.5\n11\n8.25\n19\n")
    with Agent(tools=builtin_tools(), workspace=tmp_path, approver=lambda c, t: False) as agent:
        result = agent.run("read numbers.txt and tell me the sum")
    assert "41.75" in result.text, result.text
    computed = [c for c in result.tool_calls if c.name == "calculate" and "41.75" in str(c.result)]
    assert computed, [(c.name, c.arguments, c.result) for c in result.tool_calls]


def test_the_readme_question_takes_at_most_two_model_calls(lar_home: Path, tmp_path: Path) -> None:
    from lar.types import ModelCalled

    (tmp_path / "README.md").write_text(
        "# Tidy\n\nTidy sorts your downloads folder by file type.\n\n## Install\n\n"
        "Run pip install tidy.\n\n## Use\n\nRun tidy ~/Downloads: images go to Pictures.\n"
    )
    with Agent(tools=builtin_tools(), workspace=tmp_path, approver=lambda c, t: False) as agent:
        result = agent.run("Summarize README.md in three bullets.")
    calls = [e for e in result.events if isinstance(e, ModelCalled)]
    # No correction round and no second look: one call of a file tool, then the answer. (Which
    # file tool the 1.5B picks is not settled: with the listing of this commit it reads the
    # file's details, not its text; docs/evals.md, "Everyday suite".)
    assert len(calls) <= 2, [(c.turn, c.policy) for c in calls]
    assert [c.arguments.get("path") for c in result.tool_calls] == ["README.md"]


def test_a_question_about_a_table_is_answered_by_code_without_a_yes(
    lar_home: Path, tmp_path: Path
) -> None:
    """Issue 45, Must show 5: a data question about a file, without --yes, answered by Python
    over it that ran on a copy and changed nothing (so no one was asked). That such code can
    neither write, delete nor reach the network: tests/tools/test_staging.py
    (``test_without_an_approver_a_run_that_writes_or_deletes_changes_nothing``,
    ``test_a_run_nobody_approved_cannot_read_the_users_home_or_reach_the_network``)."""
    import hashlib
    import random
    from decimal import Decimal

    from lar.tools.sandbox import isolation_level

    if isolation_level() != "bubblewrap":
        pytest.skip("code runs unasked only on a copy of the workspace, which needs bubblewrap")
    rng = random.Random(4507)
    regions = rng.sample(["north", "south", "east", "west", "coast", "hills"], 3)
    rows = [(rng.choice(regions), f"item{i}", Decimal(rng.randint(100, 30000)) / 100)
            for i in range(rng.randint(12, 20))]  # fmt: skip
    region = rows[0][0]
    total = sum((amount for r, _, amount in rows if r == region), Decimal(0))
    table = "region,product,amount\n" + "".join(f"{r},{p},{a:.2f}\n" for r, p, a in rows)
    work = tmp_path / "work"
    work.mkdir()
    (work / "sales.csv").write_text(table)
    before = hashlib.sha256(table.encode()).hexdigest()
    out = subprocess.run(
        [sys.executable, "-m", "lar", "run", "--no-memory",
         f"What is the total amount for the {region} region in sales.csv?"],
        capture_output=True, text=True, cwd=work, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert re.search(r"^tool: code_(run|read)\(.* ok, ", out.stderr, re.M), out.stderr
    assert f"{total:.2f}".rstrip("0").rstrip(".") in out.stdout.replace(",", ""), (
        total,
        out.stdout,
        out.stderr,
    )
    assert "permission" not in out.stdout  # nothing was refused, nothing asked
    assert hashlib.sha256((work / "sales.csv").read_bytes()).hexdigest() == before
    assert sorted(p.name for p in work.iterdir()) == ["sales.csv"]


GERMAN_MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
                 "September", "Oktober", "November", "Dezember")  # fmt: skip
GERMAN_DAYS = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")
ENGLISH_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def test_a_weekday_and_a_span_of_days_are_computed_by_the_calendar(
    lar_home: Path, tmp_path: Path
) -> None:
    """Dates a small model gets wrong in its head (issue 45): asked in German and in Spanish,
    on dates drawn from a seed, the calendar tool is called and its figure is the answer."""
    import random
    from datetime import date, timedelta

    rng = random.Random(9173)
    day = date(1960, 1, 1) + timedelta(days=rng.randint(0, 80 * 365))
    start = date(2000, 1, 1) + timedelta(days=rng.randint(0, 40 * 365))
    end = start + timedelta(days=rng.randint(40, 900))
    tools = builtin_tools()  # calendar among them, listed for a request that names a date
    with Agent(tools=tools, workspace=tmp_path, approver=lambda c, t: False) as agent:
        weekday = agent.run(
            f"Welcher Wochentag war der {day.day}. {GERMAN_MONTHS[day.month - 1]} {day.year}?"
        )
        span = agent.run(f"¿Cuántos días hay del {start.isoformat()} al {end.isoformat()}?")
    assert "calendar" in [c.name for c in weekday.tool_calls], weekday.tool_calls
    named = (GERMAN_DAYS[day.weekday()], ENGLISH_DAYS[day.weekday()])
    assert any(n in weekday.text for n in named), (day, weekday.text)
    others = [d for i, d in enumerate(GERMAN_DAYS) if i != day.weekday()]
    assert not any(d in weekday.text for d in others), weekday.text
    assert "calendar" in [c.name for c in span.tool_calls], span.tool_calls
    days = (end - start).days
    assert re.search(rf"(?<![\d.,]){days}(?![\d.,]\d)", span.text.replace(".", "")), (
        days,
        span.text,
    )
