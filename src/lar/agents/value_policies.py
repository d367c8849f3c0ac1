"""The policy about a value's scale: a percentage the request gives, passed to a tool on the
other scale than its parameter says it takes (lar.calling.percents), is put on that scale before
the call runs (lar.agents.policies registers the rest)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from lar.agents.policy import ACCEPT, ChangeCalls, Policy, Turn, Verdict, builtin
from lar.calling.percents import rescaled_percents
from lar.types import Code

__all__ = ["PercentScale"]


@builtin
class PercentScale(Policy):
    name: ClassVar[str] = "percent_scale"
    about: ClassVar[str] = (
        "a percentage of the request passed on the other scale than the parameter says it "
        "takes (0.045 for 4.5 % to a rate in percent, 4.5 to one taken as a decimal): put on "
        "the parameter's scale"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        request = " ".join(turn.requests(1))
        changed, said = [], []
        for call in turn.calls:
            tool = turn.tools.get(call.name)
            fixed = rescaled_percents(tool.parameters, call.arguments, request) if tool else {}
            if fixed:
                said += [f"{call.name} {k}={call.arguments[k]!r} → {v!r}" for k, v in fixed.items()]
                call = dataclasses.replace(call, arguments={**call.arguments, **fixed})
            changed.append(call)
        if not said:
            return ACCEPT
        return ChangeCalls(
            Code.PERCENT_SCALE,
            f"a percentage put on its parameter's scale: {', '.join(said)}",
            calls=tuple(changed),
        )
