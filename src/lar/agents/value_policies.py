"""The policies about values: a percentage the request gives, passed to a tool on the other
scale than its parameter says it takes (lar.calling.percents), is put on that scale before the
call runs; figures in an answer after every call of the request failed, which nobody gave, are
asked about once; a figure grouped in thousands with points (9.385 in German) passed as a
decimal gets the number the request means; a conversion between two units the request names,
worked out by hand, is run by the converter (lar.agents.policies registers the rest)."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import ClassVar

from lar.agents.answer_policies import CONVERTER
from lar.agents.answers import invented_figures
from lar.agents.policy import ACCEPT, ChangeCalls, Policy, Retry, Turn, Verdict, builtin
from lar.calling.grouping import grouped_figures, ungrouped
from lar.calling.percents import rescaled_percents
from lar.calling.prompt import failed_only
from lar.calling.relevance import request_language
from lar.types import Code, ToolCall

__all__ = ["PercentScale", "FiguresWithoutData", "GroupedFigures", "ToConverter"]

_FIGURE = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w]|[.,]\d)")


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


@builtin
class FiguresWithoutData(Policy):
    name: ClassVar[str] = "figures_without_data"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "every call of the request failed or was refused, yet the answer gives figures nobody "
        "gave (today's temperature, a price): asked once to say, in the request's language, "
        "what could not be found and why, with no figure; an answer that still has one is "
        "replaced by the account of what did not run (lar.agents.answers)"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn) or not failed_only(turn.history):
            return ACCEPT
        figures = invented_figures(turn.text, [turn.grounding()])
        if not figures:
            return ACCEPT
        language = request_language(next(iter(turn.requests(1)), ""))
        written = f" in {language}" if language else ""
        shown = ", ".join(figures[:3])
        return Retry(
            Code.FIGURES_WITHOUT_DATA,
            f"every call failed, yet the answer gave figures no one gave ({shown})",
            nudge=(
                f"No tool gave any data for my request: every call failed or was not allowed, "
                f"so {shown} comes from nowhere. Answer again{written}: say plainly what you "
                "could not find or do, and why, with no figure I did not give you."
            ),
        )


@builtin
class GroupedFigures(Policy):
    name: ClassVar[str] = "grouped_figures"
    about: ClassVar[str] = (
        "a figure the request writes with points between thousands (9.385 in German, "
        "Spanish, Portuguese, or next to a decimal comma) passed to a harmless tool as a "
        "decimal (9.385): given the number the request means (9385)"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        request = " ".join(turn.requests(1))
        figures = grouped_figures(request) if request else {}
        if not figures:
            return ACCEPT
        changed, said = [], []
        for call in turn.calls:
            tool = turn.tools.get(call.name)
            fixed = ungrouped(call.arguments, figures) if tool and tool.harmless else {}
            if fixed:
                said += [f"{call.name} {k}={call.arguments[k]!r} → {v!r}" for k, v in fixed.items()]
                call = dataclasses.replace(call, arguments={**call.arguments, **fixed})
            changed.append(call)
        if not said:
            return ACCEPT
        return ChangeCalls(
            Code.GROUPED_FIGURES,
            f"a figure grouped in thousands, passed as a decimal: {', '.join(said)}",
            calls=tuple(changed),
        )


@builtin
class ToConverter(Policy):
    name: ClassVar[str] = "to_converter"
    about: ClassVar[str] = (
        "a first calculation, or conversion, of a request that asks to convert an amount "
        "between two units pint reads (109 degrees Fahrenheit to Celsius, 12,5 km in miles), "
        "worked out with factors the model supplied or from another amount: run by the "
        "converter on the request's amount and units instead"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        from lar.tools.builtin.calc import amount_of, asked_conversion

        if turn.run.completed or CONVERTER not in turn.tools:
            return ACCEPT  # later calls work on results, not on the request's amount
        request = " ".join(turn.requests(1))
        asked = asked_conversion(request)
        figures = {amount_of(f) for f in _FIGURE.findall(request)}
        changed, said = [], []
        for call in turn.calls:
            new: dict[str, object] | None = None
            if asked is not None and self._stands_for(call, asked[0], request):
                new = {"value": asked[0], "from_unit": asked[1], "to_unit": asked[2]}
            elif asked is None and self._misread(call, figures):
                # units pint cannot read in the request's words, named by the model, and an
                # amount that is a figure of the request misread (2478000 for "247,8")
                new = {**call.arguments, "value": self._misread(call, figures)}
            if new is not None:
                said.append(f"{call.name}({', '.join(map(str, call.arguments.values()))})")
                call = dataclasses.replace(call, name=CONVERTER, arguments=new)
            changed.append(call)
        if not said:
            return ACCEPT
        return ChangeCalls(
            Code.TO_CONVERTER,
            f"a conversion the request asks for, run by the converter on its amount: "
            f"{', '.join(said)} → {', '.join(_shown(c) for c in changed if c.name == CONVERTER)}",
            calls=tuple(changed),
        )

    @staticmethod
    def _misread(call: ToolCall, figures: set[float]) -> float | None:
        """The request's figure a converter call's amount misreads: none of the figures, but
        the same digits as one of them with the decimal mark lost or moved (2478000, 24.78
        for 247.8); None otherwise."""
        value = call.arguments.get("value")
        if call.name != CONVERTER or not isinstance(value, int | float) or isinstance(value, bool):
            return None
        if any(math.isclose(value, f) for f in figures):
            return None

        def digits(x: float) -> str:
            return f"{x:.6f}".replace(".", "").strip("0")

        same = [f for f in figures if digits(f) == digits(value)]
        return same[0] if len(same) == 1 else None

    @staticmethod
    def _stands_for(call: ToolCall, amount: float, request: str) -> bool:
        """A calculation of the amount with no other figure of the request (its factors are
        the model's), or a conversion of some other amount than the request's."""
        from lar.tools.builtin.calc import amount_of

        if call.name == CONVERTER:
            value = call.arguments.get("value")
            return isinstance(value, int | float) and not math.isclose(value, amount)
        expression = call.arguments.get("expression") if call.name == "calculate" else None
        if not isinstance(expression, str):
            return False
        given = {amount_of(f) for f in _FIGURE.findall(request)}
        used = [amount_of(f) for f in _FIGURE.findall(expression)]
        return any(math.isclose(u, amount) for u in used) and not any(
            u in given and not math.isclose(u, amount) for u in used
        )


def _shown(call: ToolCall) -> str:
    return f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"
