"""Lar's named policies (lar.agents.policy) and the default profile.

Each corrects one way small models fail, measured in docs/evals.md. None blocks a call for the
language of the request: a check that is unsure asks once (the model, with its evidence, or
the user's request again) and otherwise lets the call run; permissions still guard side
effects. Names are stable: profiles, ``agent.policies`` and ``lar eval --ablate`` use them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar, Literal

from lar.agents.answers import pasted
from lar.agents.policy import (
    ACCEPT,
    AddCalls,
    ChangeCalls,
    DropCalls,
    Finish,
    Policy,
    Retry,
    Turn,
    Verdict,
    WithholdTools,
    builtin,
)
from lar.agents.replies import made_up
from lar.calling.corrections import (
    DESCRIBED_NUDGE,
    MORE_CALLS_NUDGE,
    closest_tools,
    described_call,
    invented_nudge,
    more_calls,
    names_several,
    ungrounded_nudge,
)
from lar.calling.native import extract_calls
from lar.calling.prompt import call_text, this_requests_calls, this_requests_results
from lar.calling.relevance import OffTopic, invented_options
from lar.tools.executor import tool_names
from lar.types import Code, Message, ToolCall

__all__ = ["DEFAULT_PROFILE", "fits_prompt", "parse_fits"]


@builtin
class InventedTool(Policy):
    name: ClassVar[str] = "invented_tool"
    about: ClassVar[str] = "a call to a tool that is not listed: asked once for the one it meant"

    async def on_reply(self, turn: Turn) -> Verdict:
        if not turn.invented or turn.run.last_turn:
            return ACCEPT
        first = turn.invented[0].name
        if not self.fired(turn):
            described = {n: t.description for n, t in turn.tools.items()}
            closest = closest_tools(first, list(turn.invented[0].arguments), described)
            nudge = invented_nudge(first, list(turn.tools), closest)
            said = f"asking once for the tool meant by {first}"
            return Retry(Code.INVENTED_TOOL, said, nudge=nudge)
        if not turn.calls and not turn.run.answer_mode:
            return WithholdTools(
                Code.INVENTED_TOOL, f"{first} again: asking for the answer without tools"
            )
        return ACCEPT

    async def before_answer(self, turn: Turn) -> Verdict:
        if turn.invented and not turn.text.strip():
            names = ", ".join(c.name for c in turn.invented)
            return Finish(
                Code.INVENTED_TOOL,
                "the model only called tools that do not exist",
                answer=f"I have no tool for that: {names} is not one of my tools.",
            )
        return ACCEPT


@builtin
class InventedOption(Policy):
    name: ClassVar[str] = "invented_option"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "an optional argument whose value is found nowhere in the conversation is left out, "
        "so the tool's default applies"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        context = turn.grounding()
        changed, dropped = [], []
        for call in turn.calls:
            tool = turn.tools.get(call.name)
            invented = invented_options(tool, call.arguments, context) if tool else []
            if invented:
                args = {k: v for k, v in call.arguments.items() if k not in invented}
                call = dataclasses.replace(call, arguments=args)
                dropped += [f"{call.name} {k}" for k in invented]
            changed.append(call)
        if not dropped:
            return ACCEPT
        return ChangeCalls(
            Code.INVENTED_OPTION,
            f"left out, found nowhere in the conversation: {', '.join(dropped)}",
            calls=tuple(changed),
        )


@builtin
class RepeatedCall(Policy):
    name: ClassVar[str] = "repeated_call"
    # The test-set ablations: +43 of 99 on native (without it the model calls the same tool
    # again after its result until max_turns), 0 on protocol, where the loop guard bounds repeats.
    tracks: ClassVar[frozenset[str]] = frozenset({"native"})
    about: ClassVar[str] = "a call whose result is known is not run again: the answer is asked for"

    async def before_calls(self, turn: Turn) -> Verdict:
        repeats = [c for c in turn.calls if turn.key(c) in turn.run.completed]
        if not repeats:
            return ACCEPT
        shown = call_text(repeats[0].name, repeats[0].arguments)
        if turn.run.answer_mode:
            last = turn.run.completed[turn.key(repeats[0])]
            return Finish(
                Code.REPEATED_CALL,
                f"the model kept repeating {shown}; showing its result",
                answer=f"{shown} returned: {last.content}",
                reason="loop",
            )
        return WithholdTools(
            Code.REPEATED_CALL, f"{shown} already ran; asking for the answer without tools"
        )


def _first_calls(turn: Turn) -> bool:
    """A run's first calls, with turns left to correct them: where the request alone decides."""
    return bool(turn.calls) and not turn.run.completed and not turn.run.last_turn


def _similarities(turn: Turn, judged: list[tuple[ToolCall, OffTopic]]) -> dict[str, float]:
    """A verdict's numbers: each judged call's similarity, and the check's two thresholds."""
    assert turn.relevance is not None
    numbers = {f"similarity.{c.name}": round(v.score, 3) for c, v in judged}
    return numbers | {
        "threshold": turn.relevance.threshold,
        "grounded_above": turn.relevance.grounded_above,
    }


@builtin
class UngroundedValues(Policy):
    name: ClassVar[str] = "ungrounded_values"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "a first call with a required value found nowhere in the conversation, to a tool not "
        "clearly about the request: asked once for the step that finds it"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if turn.relevance is None or not _first_calls(turn) or self.fired(turn):
            return ACCEPT
        # In English a low score alone is enough (off_topic); elsewhere it is no evidence.
        low_is_off = turn.english()
        threshold = turn.relevance.threshold
        invented = [
            (c, v)
            for c, v in zip(turn.calls, turn.judged(), strict=True)
            if v and v.invented and not (low_is_off and v.score < threshold)
        ]
        if not invented:
            return ACCEPT
        values = [(c.name, a, c.arguments[a]) for c, v in invented for a in v.invented]
        shown = "; ".join(f"{c.name} {v}" for c, v in invented)
        numbers = _similarities(turn, [(c, v) for c, v in invented])
        if len(invented) < len(turn.calls):  # the calls with given values run first
            return DropCalls(
                Code.DEFERRED_CALL,
                f"not run: {shown}; the calls that fit run first",
                numbers,
                calls=tuple(c for c, _ in invented),
            )
        return Retry(
            Code.UNGROUNDED_CALL,
            f"not run: invented values ({shown}); asking once for the call that finds them, "
            "or the answer",
            numbers,
            nudge=ungrounded_nudge(values),
        )


FITS_SYSTEM = (
    "You check whether a tool call fits a user's request. The request may be in any language. "
    "Reply with one word: yes or no."
)


def fits_prompt(request: str, call: ToolCall, description: str) -> list[Message]:
    """The question the off-topic check asks the model when similarity alone is low."""
    return [
        Message("system", FITS_SYSTEM),
        Message(
            "user",
            f"Request: {request}\n\nCall: {call_text(call.name, call.arguments)}\n"
            f"Tool {call.name}: {description}\n\n"
            "Does this tool give what the request asks for? yes or no",
        ),
    ]


_NO = ("no", "não", "nao", "non", "nein", "nee", "不", "否")
_YES = ("yes", "sim", "sí", "si", "oui", "ja", "是", "对")


def parse_fits(text: str) -> bool | None:
    """The model's yes (True) or no (False); None when it said neither."""
    words = text.strip().strip("*`\"'.").casefold().split()
    head = words[0].strip(".,!:;") if words else ""
    if head in _NO or head.startswith("不"):
        return False
    if head in _YES:
        return True
    return None


@builtin
class OffTopicCall(Policy):
    name: ClassVar[str] = "off_topic"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "a first call to an English request's tool whose description is far from it is not "
        "run, nor one whose text is still found nowhere after being asked once"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if turn.relevance is None or not _first_calls(turn) or not turn.english():
            return ACCEPT
        threshold = turn.relevance.threshold
        off: list[tuple[ToolCall, OffTopic, str]] = []
        for call, verdict in zip(turn.calls, turn.judged(), strict=True):
            if verdict is not None and _doubt(turn, call, verdict) == "refuse":
                why = "" if verdict.score < threshold else "text still invented after asking"
                off.append((call, verdict, why))
        if not off:
            return ACCEPT
        shown = "; ".join(
            f"{c.name}: similarity {v.score:.2f} (threshold {threshold:.2f}"
            + (f"; {', '.join(v.invented)} not in the conversation" if v.invented else "")
            + (f"; {why}" if why else "")
            + ")"
            for c, v, why in off
        )
        return _refused(turn, f"not run, unrelated to the request: {shown}",
                        [(c, v) for c, v, _ in off])  # fmt: skip


def _doubt(turn: Turn, call: ToolCall, verdict: OffTopic) -> Literal["refuse", "ask"] | None:
    """What a first call judged off the request deserves: ``refuse`` where the evidence holds
    (off_topic: in English, the embedder's language, a low score, or text still found nowhere
    after ungrounded_values asked), ``ask`` where it proves little (doubted_values: any value
    still found nowhere outside English, where text may be translated, or a number in English,
    which may be worked out), None where it runs."""
    assert turn.relevance is not None
    low = verdict.score < turn.relevance.threshold
    asked = turn.times(UngroundedValues.name) > 0
    invented_text = any(isinstance(call.arguments.get(a), str) for a in verdict.invented)
    if turn.english() and (low or (asked and invented_text)):
        return "refuse"
    if verdict.invented and (asked or low):
        return "ask"
    return None


@builtin
class DoubtedValues(Policy):
    name: ClassVar[str] = "doubted_values"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "a first call with a value still found nowhere where that proves little (any value "
        "outside English, where text may be translated; a number in English, which may be "
        "worked out) is put to the model, and only its no stops it"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if turn.relevance is None or not _first_calls(turn):
            return ACCEPT
        off: list[tuple[ToolCall, OffTopic]] = []
        for call, verdict in zip(turn.calls, turn.judged(), strict=True):
            if verdict is not None and _doubt(turn, call, verdict) == "ask":
                if await _fits(turn, call) is False:
                    off.append((call, verdict))
        if not off:
            return ACCEPT
        shown = "; ".join(
            f"{c.name}: {', '.join(v.invented)} not in the conversation" for c, v in off
        )
        return _refused(turn, f"not run, the model says it does not fit the request: {shown}", off)


def _refused(turn: Turn, message: str, off: list[tuple[ToolCall, OffTopic]]) -> DropCalls:
    """The calls judged unrelated do not run; when none is left, the answer without tools."""
    return DropCalls(
        Code.OFF_TOPIC_CALL,
        message,
        _similarities(turn, off),
        calls=tuple(c for c, _ in off),
        then=WithholdTools(Code.OFF_TOPIC_CALL, "asking for the answer without tools"),
    )


async def _fits(turn: Turn, call: ToolCall) -> bool | None:
    """The model's word on whether ``call`` fits the request (None: it said neither, or asking
    was not possible)."""
    if turn.asker is None:
        return None
    requests = turn.requests()
    request = requests[0] if requests else ""
    reply = await turn.ask(fits_prompt(request, call, turn.tools[call.name].description))
    return None if reply is None else parse_fits(reply.content)


@builtin
class MoreCalls(Policy):
    name: ClassVar[str] = "more_calls"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "one first call for a request that may name several items: asked once for the rest; "
        "only calls whose values the conversation holds are added"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if (
            len(turn.calls) != 1
            or not _first_calls(turn)
            or turn.asker is None
            or any(turn.run.fired.values())
            or not names_several(next(iter(turn.requests(1)), ""))
            or turn.response is None
        ):
            return ACCEPT
        asked = [
            *turn.request,
            Message("assistant", turn.response.content),
            Message("user", MORE_CALLS_NUDGE),
        ]
        reply = await turn.ask(asked)
        if reply is None:
            return ACCEPT
        found = extract_calls(reply, tool_names(list(turn.tools.values()))).calls
        # Several items are more calls of the same tools; another tool is a later step, which
        # needs this call's result first (asked for more, "sum numbers.txt" got a calculate
        # call with made-up numbers beside the file_read).
        same = {c.name for c in turn.calls}
        found = [c for c in found if c.name in same]
        extra = more_calls(turn.calls, found, turn.tools, turn.key, turn.grounding())
        if not extra:
            return ACCEPT
        shown = ", ".join(call_text(c.name, c.arguments) for c in extra)
        return AddCalls(
            Code.MORE_CALLS,
            f"asked once for the calls the request needs: {shown}",
            {"added": float(len(extra))},
            calls=tuple(extra),
        )


@builtin
class DescribedCall(Policy):
    name: ClassVar[str] = "described_call"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = "an answer that writes out a listed tool's name instead of calling it"

    async def before_answer(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn):
            return ACCEPT
        ran = {r.name for r in turn.run.completed.values() if r.ok}
        talked = described_call(_without_ran_calls(turn), list(turn.tools), ran)
        if talked is None:
            return ACCEPT
        return Retry(
            Code.DESCRIBED_CALL, f"the model described a call to {talked}", nudge=DESCRIBED_NUDGE
        )


@builtin
class MadeUpResult(Policy):
    name: ClassVar[str] = "made_up_result"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        'a reply that shows a result of a call with effects that was never made ("wrote 100 '
        'characters to shopping.md"): asked once for the call instead; the made-up block is '
        "never shown as the answer"
    )

    async def on_reply(self, turn: Turn) -> Verdict:
        if turn.calls or not self.may_correct(turn):
            return ACCEPT
        made = made_up(turn.text, turn.history)
        if not made:
            return ACCEPT
        return Retry(
            Code.MADE_UP_RESULT,
            f"the reply showed a result of {made[0]}, which was never called",
            nudge=(
                f"{made[0]} was never called: that result is made up, and nothing happened. "
                "If my request needs it, reply with only the call; otherwise answer in plain "
                "text."
            ),
        )


PASTED_NUDGE = (
    "That copies the tool's output back instead of answering. Answer my request in a sentence "
    "or two, in the language I wrote it in, with the values it asks for taken from that output."
)


@builtin
class PastedResult(Policy):
    name: ClassVar[str] = "pasted_result"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "an answer that is a tool's output copied back (numbered lines, a listing's rows, a "
        "write's report) instead of the values asked for: asked once for a sentence in the "
        "request's language carrying them"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn):
            return ACCEPT
        results = [m.content for m in this_requests_results(turn.history) if not m.failed]
        if not results or not pasted(turn.text, results):
            return ACCEPT
        return Retry(
            Code.PASTED_RESULT, "the answer copied a tool's output back", nudge=PASTED_NUDGE
        )


def _without_ran_calls(turn: Turn) -> str:
    """The answer without copies of calls that already ran: an answer that quotes the
    ``calculate(expression="6 * 0.3048") returned:`` header of its data (then gives the figure)
    describes nothing to call, and a correction round lost the 1.5B its right answer."""
    text = turn.text
    for shown in this_requests_calls(turn.history):
        text = text.replace(shown, "")
    return text


from lar.agents.answer_policies import (  # noqa: E402 - they register after the ones above
    AssumedFactor,
    CopiedInstructions,
    IgnoredMemory,
    UncheckedFigure,
    UnreadFile,
)
from lar.agents.edit_policies import LostText, PatchedRename, RefusedCall  # noqa: E402
from lar.agents.read_policies import NarrowRead  # noqa: E402
from lar.agents.skill_policies import ReopenedSkill  # noqa: E402
from lar.agents.table_policies import TableByCode  # noqa: E402
from lar.agents.value_policies import (  # noqa: E402
    ContradictedWeekday,
    FiguresWithoutData,
    GroupedFigures,
    MadeUpRate,
    PercentScale,
)

DEFAULT_PROFILE: Sequence[str] = (
    InventedTool.name,
    PercentScale.name,
    GroupedFigures.name,
    InventedOption.name,
    ReopenedSkill.name,
    RepeatedCall.name,
    UnreadFile.name,
    TableByCode.name,
    NarrowRead.name,
    UngroundedValues.name,
    OffTopicCall.name,
    DoubtedValues.name,
    MoreCalls.name,
    PatchedRename.name,
    LostText.name,
    RefusedCall.name,
    MadeUpRate.name,
    AssumedFactor.name,
    MadeUpResult.name,
    FiguresWithoutData.name,
    PastedResult.name,
    DescribedCall.name,
    CopiedInstructions.name,
    UncheckedFigure.name,
    IgnoredMemory.name,
    ContradictedWeekday.name,
)
"""Every policy, in the order the loop consults them (a model's catalog entry may list fewer)."""
