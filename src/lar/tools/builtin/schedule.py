"""schedule: a reminder as a job in ``lar.db`` (I4, I1).

It asks first (``confirm``): a job acts later without anyone watching. What it made is said in
full in the result — the time it was read as, in the user's zone, and where it will be delivered
— so a misread "tomorrow at 9" is seen at once, not at 9. A job run by the scheduler cannot
make jobs (``SCHEDULED_JOB`` in the session's state): a job that schedules itself again is the
runaway Hermes forbids too. The model makes reminders only: a job that runs a request, and the
tools it may use unasked, is made by the user (``lar schedule add --run --allow``), who sees and
confirms what it may do. The listing line is kept as short as before the scheduler existed:
every token of it is in every prompt.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from lar.tools.base import ToolContext, tool

__all__ = ["schedule", "SCHEDULED_JOB", "where_delivered"]

SCHEDULED_JOB = "scheduled_job"
"""Key of ``ToolContext.state`` set while a job runs: its id."""


def where_delivered() -> str:
    return "delivered to the inbox (`lar inbox`) while `lar serve` or `lar schedule run` is running"


@tool(permission="confirm", broad=True)
def schedule(when: str, text: str, ctx: ToolContext) -> str:
    """Set a reminder, alarm or timer.

    Args:
        when: When it is due, as the user said it.
        text: What it is for.
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
        job = store.add(ctx.redact(text), when, tz=ctx.timezone, created_by="agent")
    except ScheduleError as exc:
        raise ValueError(str(exc)) from None
    finally:
        store.close()
    assert job.next_due is not None
    at = datetime.fromtimestamp(job.next_due, ZoneInfo(job.tz))
    repeat = f" ({job.describe()})" if job.spec.split()[0] != "once" else ""
    return (
        f"scheduled job {job.id}, a reminder: {job.what!r} for {at:%A %Y-%m-%d %H:%M} "
        f"{job.tz}{repeat}; {where_delivered()}"
    )
