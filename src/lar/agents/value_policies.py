"""The policies about values: a percentage the request gives, passed to a tool on the other
scale than its parameter says it takes (lar.calling.percents), is put on that scale before the
call runs; figures in an answer after every call of the request failed, which nobody gave, are
asked about once; a figure grouped in thousands with points (9.385 in German) passed as a
decimal gets the number the request means; a weekday the calendar did not give is replaced by
the one it gave (lar.agents.policies registers the rest)."""

from __future__ import annotations

import dataclasses
import re
from typing import ClassVar

from lar.agents.answers import invented_figures
from lar.agents.policy import ACCEPT, ChangeCalls, Finish, Policy, Retry, Turn, Verdict, builtin
from lar.calling.grouping import grouped_figures, ungrouped
from lar.calling.percents import rescaled_percents
from lar.calling.prompt import failed_only
from lar.calling.relevance import request_language, request_language_code
from lar.types import Code, ToolCall

__all__ = [
    "PercentScale",
    "FiguresWithoutData",
    "GroupedFigures",
    "ContradictedWeekday",
    "MadeUpRate",
    "named_currencies",
]


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
class ContradictedWeekday(Policy):
    """Given "1981-06-23 is a Tuesday (pt: terça-feira)" by ``calendar``, the 1.5B answered
    "é um sábado (pt: sábado)": the right call, the right result, another day in the answer.
    Which day the calendar said is plain to code; so where the answer names only other
    weekdays than the one the run's calendar results gave (one date's, in English, the
    request's language or the one the result named), each is replaced by that one in the
    same language, with no model call."""

    name: ClassVar[str] = "contradicted_weekday"
    about: ClassVar[str] = (
        "an answer naming another weekday than the one the calendar gave for the date: the "
        "calendar's weekday put in its place, in the answer's words"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        from lar.tools.builtin.dates import said_weekday, weekday_name, weekdays_in

        said = [
            found
            for result in turn.run.completed.values()
            if result.name == "calendar" and result.ok
            and (found := said_weekday(result.content)) is not None
        ]  # fmt: skip
        if not turn.text.strip() or len({day for _, day, _ in said}) != 1:
            return ACCEPT
        date, day = said[0][0], said[0][1]
        languages = {language for *_, language in said if language}
        code = request_language_code(next(iter(turn.requests(1)), ""))
        named = weekdays_in(turn.text, languages | ({code} if code else set()))
        if not named or day in named:
            return ACCEPT
        answer = turn.text
        for words, language in named.values():
            right = weekday_name(day, language)
            answer = answer.replace(
                words, right[:1].upper() + right[1:] if words[:1].isupper() else right
            )
        wrong = ", ".join(words for words, _ in named.values())
        return Finish(
            Code.CONTRADICTED_WEEKDAY,
            f"the answer named {wrong}; the calendar said {date} is a {weekday_name(day, 'en')}",
            answer=answer,
        )


_CJK_MONEY = "美元|欧元|日元|英镑|人民币|法郎|加元|港币|韩元|卢布|澳元"  # calc's, apart
_MONEY_WORD = re.compile(rf"{_CJK_MONEY}|[^\W\d_\u3040-\u30ff\u3400-\u9fff]+\$?|[€$£¥₹₩]")
_AMBIGUOUS = frozenset({"won", "real", "rand", "peso", "lira"})  # words of other meanings too
_FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
CONVERTER = "convert_units"


def named_currencies(text: str) -> list[str]:
    """The currencies ``text`` names (codes, names, signs: lar.tools.builtin.calc), in order,
    each once."""
    from lar.tools.builtin.calc import is_currency

    found: list[str] = []
    for word in _MONEY_WORD.findall(text):
        if word.casefold() in _AMBIGUOUS or not is_currency(word):
            continue
        if word.upper() not in (f.upper() for f in found):
            found.append(word)
    return found


@builtin
class MadeUpRate(Policy):
    """Asked for an exchange rate, the 1.5B multiplied by one it remembered
    (``calculate("1 * 0.84")``, ``"100 * 0.85"``) and gave the product as today's rate; asked
    about the figure once (``assumed_factor``), it ran the same call again. No figure for a
    rate can be right here: where a request names two currencies and a calculation holds a
    figure neither the conversation nor a tool result gave, the call becomes the converter's
    for those currencies, which says plainly that Lar has no exchange rates (a run whose
    every call is not possible ends on that account). A rate the user gave, or a page Lar
    read, grounds the figure and the calculation runs; a fetch of a page runs as written."""

    name: ClassVar[str] = "made_up_rate"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "a calculation for a request naming two currencies with a figure nobody gave (a rate "
        "from memory): run as the converter's call for those currencies, which says Lar has "
        "no exchange rates"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        converter = turn.tools.get(CONVERTER) or turn.held.get(CONVERTER)
        request = next(iter(turn.requests(1)), "")
        money = named_currencies(request)
        if converter is None or len(money) < 2:
            return ACCEPT
        given = [float(f) for f in _FIGURE.findall(turn.grounding())]
        known = {1.0, *given, *(g / 100 for g in given), *(1 + g / 100 for g in given)}
        calls, made_up = [], []
        for call in turn.calls:
            tool = turn.tools.get(call.name)
            values = " ".join(str(v) for v in call.arguments.values() if isinstance(v, str))
            supplied = [f for f in _FIGURE.findall(values) if float(f) not in known]
            computes = tool is not None and tool.harmless and not tool.reads_outside
            if computes and call.name != CONVERTER and supplied:  # a page may give a rate
                made_up += supplied
                amount = next((float(f) for f in _FIGURE.findall(request)), 1.0)
                args = {"value": amount, "from_unit": money[0], "to_unit": money[1]}
                call = ToolCall(call.id, converter.name, args)
            calls.append(call)
        if not made_up:
            return ACCEPT
        return ChangeCalls(
            Code.MADE_UP_RATE,
            f"a rate nobody gave ({', '.join(made_up[:3])}) for {money[0]} to {money[1]}: "
            "asked the converter",
            calls=tuple(calls),
        )
