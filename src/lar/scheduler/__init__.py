"""Schedules (I4): expressions, jobs in ``lar.db``, the inbox and notifiers.

What runs a due job as a task is above this package (lar.agents.scheduled); here is only what
the ``schedule`` tool, the CLI and that runner share.
"""

from lar.scheduler.jobs import InboxItem, Job, JobRun, JobStore
from lar.scheduler.notify import Notifier, notifiers_from
from lar.scheduler.when import FORMS, Schedule, ScheduleError, next_due, parse_schedule, zone

__all__ = [
    "FORMS",
    "InboxItem",
    "Job",
    "JobRun",
    "JobStore",
    "Notifier",
    "notifiers_from",
    "Schedule",
    "ScheduleError",
    "next_due",
    "parse_schedule",
    "zone",
]
