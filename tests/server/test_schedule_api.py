"""The server fires scheduled jobs while it runs, and /api shows the inbox and the jobs."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from lar.scheduler import JobStore

pytestmark = pytest.mark.anyio


async def test_the_hub_fires_a_due_job_and_the_api_shows_it(
    lar_home: Path, make_client: Any
) -> None:
    client, hub, _ = await make_client([])
    jobs = JobStore(lar_home / "lar.db")
    missed = jobs.add("water the plants", "every 1h", tz="UTC", now=time.time() - 7200)
    later = jobs.add("call the bank", "daily 09:00", tz="UTC")
    hub.start_jobs()
    for _ in range(200):
        if jobs.inbox():
            break
        await asyncio.sleep(0.05)
    [item] = (await client.get("/api/inbox")).json()["items"]
    assert item["title"] == "Reminder: water the plants" and item["job_id"] == missed.id
    listed = {j["id"]: j for j in (await client.get("/api/jobs")).json()["jobs"]}
    assert listed[later.id]["schedule"] == "cron 0 9 * * *"
    assert listed[missed.id]["next_due"] > time.time()  # moved past now: no burst
    assert [r.state for r in jobs.runs(missed.id)] == ["done"]
