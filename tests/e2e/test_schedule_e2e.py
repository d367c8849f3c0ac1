"""End to end on the embedded model: a reminder asked for in words becomes one job at the right
local time, and a scheduler whose clock reaches that time delivers it to the inbox."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from lar.agents import JobRunner
from lar.scheduler import JobStore

ZONE = "Asia/Tokyo"  # not this machine's: "9am" must be read in the user's zone


def lar(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "TZ": ZONE},
    )


def test_remind_me_tomorrow_at_9am_makes_one_job_that_fires_at_9_into_the_inbox(
    lar_home: Path, tmp_path: Path
) -> None:
    asked = datetime.now(ZoneInfo(ZONE))
    out = lar("run", "--yes", "Remind me tomorrow at 9am to call my mother", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "tool: schedule(" in out.stderr
    listed = lar("schedule", "list", cwd=tmp_path)
    assert "call my mother" in listed.stdout, listed.stdout

    store = JobStore(lar_home / "lar.db")
    [job] = store.jobs()
    tomorrow = (asked + timedelta(days=1)).date()
    nine = datetime(tomorrow.year, tomorrow.month, tomorrow.day, 9, 0, tzinfo=ZoneInfo(ZONE))
    assert job.tz == ZONE and job.action == "remind"
    assert job.next_due == nine.timestamp()
    assert "mother" in job.what.lower()

    class Clock:
        at = nine.timestamp() - 60

        def __call__(self) -> float:
            return self.at

    clock = Clock()
    runner = JobRunner(store, clock=clock)
    assert asyncio.run(runner.tick()) == [] and store.inbox() == []  # 08:59: not yet
    clock.at = nine.timestamp()
    [fired] = asyncio.run(runner.tick())
    assert fired.state == "done"
    [item] = store.inbox()
    assert item.title.startswith("Reminder: ") and "mother" in item.title.lower()
    assert "call my mother" in lar("inbox", cwd=tmp_path).stdout.lower()
