"""Policies about skills (lar.skills) on small models."""

from __future__ import annotations

from typing import ClassVar

from lar.agents.policy import ACCEPT, Policy, Retry, Turn, Verdict, builtin
from lar.calling.prompt import SKILL_PREFIX
from lar.types import Code

__all__ = ["ReopenedSkill"]

REOPEN_NUDGE = (
    "You opened {name} already: its guide is in the tool result above. Do my request with it "
    "now: reply with the tool call it needs (code_run, shell or another listed tool), using the "
    "values in my request."
)


@builtin
class ReopenedSkill(Policy):
    """A small model shown a skill's guide often opens the same skill again instead of acting
    on it (bench/skills.py, dev set), which spends a turn and ends the run on a copy of the
    guide. Asked once for the call the guide needs instead."""

    name: ClassVar[str] = "reopened_skill"
    # On native the repeated_call policy already keeps a call whose result is known from running.
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = "a skill opened again with the same arguments: asked once to act on it"

    async def before_calls(self, turn: Turn) -> Verdict:
        if not turn.calls or turn.run.last_turn or turn.run.answer_mode or self.fired(turn):
            return ACCEPT
        if all(c.name.startswith(SKILL_PREFIX) and turn.key(c) in turn.run.completed
               for c in turn.calls):  # fmt: skip
            name = turn.calls[0].name
            return Retry(
                Code.REPEATED_CALL, f"{name} reopened; asking for the call its guide needs",
                nudge=REOPEN_NUDGE.format(name=name),
            )  # fmt: skip
        return ACCEPT
