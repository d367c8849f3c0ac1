"""schedule: a reminder, or a request to run later, as a job in ``lar.db`` (I4, I1).

It asks first (``confirm``): a job acts later without anyone watching. What it made is said in
full in the result — the time it was read as, in the user's zone, and where it will be delivered
— so a misread "tomorrow at 9" is seen at once, not at 9. A job run by the scheduler cannot
make jobs (``SCHEDULED_JOB`` in the session's state): a job that schedules itself again is the
runaway Hermes forbids too. A ``run`` job the agent makes is granted no tool that needs a yes;
``lar schedule add --allow`` grants them, shown and confirmed by the user.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

from lar.tools.base import ToolContext, tool

__all__ = ["schedule", "SCHEDULED_JOB", "where_delivered"]

SCHEDULED_JOB = "scheduled_job"
"""Key of ``ToolContext.state`` set while a job runs: its id."""


def where_delivered() -> str:
    return "delivered to the inbox (`lar inbox`) while `lar serve` or `lar schedule run` is running"


@tool(permission="confirm", broad=True)
def schedule(
    when: str,
    text: str,
    ctx: ToolContext,
    action: Literal["remind", "run"] = "remind",
) -> str:
    """Set a reminder (or a request to run later) for a time or on a repeat.

    Args:
        when: When, as said: "tomorrow at 9am", "2026-12-24 18:00", "daily 08:00", "every 2h".
        text: What to remind of (for action "run": the request to run then).
        action: "remind" delivers the text when due; "run" runs it as a request then.
    """
    from lar.scheduler import JobStore, ScheduleError

    if ctx.state.get(SCHEDULED_JOB) is not None:
        raise PermissionError(
            f"a scheduled job (job {ctx.state[SCHEDULED_JOB]}) cannot create jobs; "
            "do not retry it, answer without it"
        )
    if ctx.home is None:
        raise RuntimeError("schedules need a Lar home directory; none is configured for this run")
    store = JobStore(Path(ctx.home) / "lar.db")
    try:
        job = store.add(ctx.redact(text), when, action=action, created_by="agent")
    except ScheduleError as exc:
        raise ValueError(str(exc)) from None
    finally:
        store.close()
    assert job.next_due is not None
    at = datetime.fromtimestamp(job.next_due, ZoneInfo(job.tz))
    kind = "reminder" if action == "remind" else "request"
    repeat = f" ({job.describe()})" if job.spec.split()[0] != "once" else ""
    return (
        f"scheduled job {job.id}, a {kind}: {job.what!r} for {at:%A %Y-%m-%d %H:%M} "
        f"{job.tz}{repeat}; {where_delivered()}"
    )
