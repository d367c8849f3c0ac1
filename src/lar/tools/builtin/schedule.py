"""schedule: what a request for a reminder, alarm or timer meets until Lar has a scheduler.

Lar runs only while someone uses it, so nothing can happen at a set time yet. Without a tool for
it a small model reaches for what is listed ("remind me at 9" became a broken ``todo`` call, an
alarm a ``shell`` call to ``at``) and the user is never told it cannot work. This tool is the
honest answer to such a request: it changes nothing and always fails (``not_possible``) with
what would make the request possible, which is then the answer (lar.agents.answers). The
scheduler (schedules that survive restarts, run by ``lar serve``) will give this name its real
body.
"""

from __future__ import annotations

from lar.tools.base import NotPossibleHere, tool

__all__ = ["schedule", "NO_SCHEDULER"]

NO_SCHEDULER = (
    "Lar cannot act at a set time yet: it has no scheduler, so nothing was scheduled. Set it "
    "in your phone or calendar, or ask Lar to keep it on your to-do list."
)
"""What every call fails with, for the user and the model alike."""


@tool(broad=True)
def schedule(when: str, text: str) -> str:
    """Set a reminder, alarm or timer.

    Args:
        when: When it is due, as the user said it.
        text: What it is for.
    """
    raise NotPossibleHere(NO_SCHEDULER)
