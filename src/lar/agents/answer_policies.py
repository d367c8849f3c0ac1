"""The policies about the answer a user gets on everyday requests: an answer that only copies
Lar's instructions, a file the request names left unread, a figure worked out in the model's
head instead of by the calculator (lar.agents.policies registers the rest; a question about a
table file tried without code: lar.agents.table_policies)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from lar.agents.answers import invented_figures, without_addressed
from lar.agents.policy import ACCEPT, Policy, Retry, Turn, Verdict, WithholdTools, builtin
from lar.calling.prompt import tool_listing
from lar.types import Code

if TYPE_CHECKING:
    from lar.tools.base import Tool

__all__ = [
    "CopiedInstructions",
    "EnglishAnswer",
    "UnreadFile",
    "UncheckedFigure",
    "AssumedFactor",
    "IgnoredMemory",
    "assumed_factors",
    "files_named",
    "takes_numbers",
]


@builtin
class EnglishAnswer(Policy):
    name: ClassVar[str] = "english_answer"
    about: ClassVar[str] = (
        "an answer in English to a request surely in another language (py3langid; the same "
        "two signals that call a request English): asked once to give it in the request's "
        "language"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        from lar.calling.relevance import in_embedder_language, request_language

        if not self.may_correct(turn) or not turn.text.strip():
            return ACCEPT
        language = request_language(next(iter(turn.requests(1)), ""))
        if language is None or not in_embedder_language(turn.text):
            return ACCEPT
        return Retry(
            Code.ENGLISH_ANSWER,
            f"an answer in English to a request in {language}",
            nudge=f"Write your answer in {language}, not in English, with the same figures and "
            "names.",
        )


@builtin
class CopiedInstructions(Policy):
    name: ClassVar[str] = "copied_instructions"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "an answer that is nothing but a copy of what Lar told the model (a rule, a "
        "correction): asked once for the answer without tools"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn):
            return ACCEPT
        said = [m.content for m in turn.history]
        said += [turn.memory, tool_listing(list(turn.tools.values()))]
        kept, cut = without_addressed(turn.text, [m.content for m in turn.request], said)
        if not cut or kept.strip():
            return ACCEPT  # a partial copy is cut from the answer at the end
        return WithholdTools(
            Code.LEAKED_TEXT, "the answer only copied Lar's instructions; asking for the answer"
        )


@builtin
class UnreadFile(Policy):
    name: ClassVar[str] = "unread_file"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "an answer, or first calls, that leave unread a file of the workspace or a web page "
        "the request names (a summary of a README nobody read, 'I cannot access the page'): "
        "asked once to read it first"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        return self._unread(turn)

    async def before_calls(self, turn: Turn) -> Verdict:
        """First calls that touch none of the files the request names (a calculate call with
        made-up numbers for "sum the numbers in numbers.txt") come after reading them."""
        return self._unread(turn)

    def _unread(self, turn: Turn) -> Verdict:
        if turn.run.completed or not self.may_correct(turn):
            return ACCEPT
        request = next(iter(turn.requests(1)), "")
        used = " ".join(json.dumps(c.arguments, ensure_ascii=False) for c in turn.calls)
        if turn.workspace is not None and READER in turn.tools:
            named = files_named(request, turn.workspace)
            if named and not any(Path(name).name in used for name in named):
                shown = ", ".join(named[:3])
                return Retry(
                    Code.UNREAD_FILE,
                    f"the request names {shown} of the workspace, and nothing read it",
                    nudge=f"{shown} is in the workspace and you have not read it: call {READER} "
                    "first.",
                )
        pages = _URL.findall(request)
        if pages and FETCHER in turn.tools and not any(p in used for p in pages):
            return Retry(
                Code.UNREAD_FILE,
                f"the request names the page {pages[0]}, and nothing fetched it",
                nudge=f"You can fetch {pages[0]}: call {FETCHER} on it first.",
            )
        return ACCEPT


READER = "file_read"
"""The built-in tool a named file is read with (lar.tools.builtin.files)."""
FETCHER = "web_scan"
"""The built-in tool a named page is fetched with (lar.tools.builtin.web)."""
_URL = re.compile(r"https?://[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]")
_PATHLIKE = re.compile(r"[\w./~-]+\.[A-Za-z0-9]{1,8}\b")


def files_named(request: str, workspace: Path) -> list[str]:
    """The files of ``workspace`` that ``request`` names (``README.md``, ``notes/a.txt``)."""
    found = []
    for token in _PATHLIKE.findall(request):
        token = token.rstrip(".")
        try:
            if (workspace / token).is_file() and token not in found:
                found.append(token)
        except OSError:
            continue
    return found


CALCULATOR = "calculate"
"""The built-in tool figures worked out from data should come from (lar.tools.builtin.calc)."""


@builtin
class UncheckedFigure(Policy):
    name: ClassVar[str] = "unchecked_figure"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "an answer after tool data with a figure that neither the data nor the user gave (a "
        "sum worked out in the model's head): asked once to work it out with the calculator; "
        "with no tool data, an answer working a figure out from the request's numbers while a "
        "narrow tool taking numbers is offered: asked once for that tool's call"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn):
            return ACCEPT
        results = list(turn.run.completed.values())
        if not results:
            return self._worked_out(turn)
        if CALCULATOR not in turn.tools or any(r.name == CALCULATOR and r.ok for r in results):
            return ACCEPT
        if not any(r.ok and any(ch.isdigit() for ch in r.content) for r in results):
            return ACCEPT  # no figures came from a tool: nothing to work out from
        figures = invented_figures(turn.text, [turn.grounding()])
        if not figures:
            return ACCEPT
        shown = ", ".join(figures[:3])
        return Retry(
            Code.UNCHECKED_FIGURE,
            f"the answer gives {shown}, which no tool result or message holds",
            nudge=(
                f"{shown} is not in the tool results: do not work figures out yourself. Reply "
                f"with only this call, its expression written with the numbers from the "
                f'results:\n<tool_call>\n{{"name": "{CALCULATOR}", "arguments": '
                f'{{"expression": "..."}}}}\n</tool_call>'
            ),
        )

    @staticmethod
    def _worked_out(turn: Turn) -> Verdict:
        """An answer with no call behind it that works a figure out from the request's numbers
        while a narrow tool taking numbers was offered ("the area is 4852.03" beside
        ``circle_area(radius)``): asked once for the call. Only narrow tools count: Lar's own
        (broad) tools are general enough that an answer without them may be right."""
        computing = [t.name for t in turn.tools.values() if not t.broad and takes_numbers(t)]
        request = next(iter(turn.requests(1)), "")
        if not computing or not any(ch.isdigit() for ch in request):
            return ACCEPT
        sent = [m.content for m in turn.request if m.content]
        figures = invented_figures(turn.text, [turn.grounding(), *sent])
        if not figures:
            return ACCEPT
        shown, names = ", ".join(figures[:3]), ", ".join(computing[:4])
        return Retry(
            Code.UNCHECKED_FIGURE,
            f"the answer works out {shown} itself; offered: {names}",
            nudge=(
                f"You worked out {shown} yourself. Do not compute figures in your head: if one "
                f"of your tools ({names}) computes what I asked, reply with only that call, "
                "its arguments taken from my request. If none of them does, give your answer "
                "again."
            ),
        )


_NUMERIC = frozenset({"number", "integer", "float"})


def takes_numbers(tool: Tool) -> bool:
    """Whether one of ``tool``'s parameters is a number or a list of numbers."""
    for spec in tool.parameters.get("properties", {}).values():
        if not isinstance(spec, dict):
            continue
        kinds = spec.get("type")
        items = spec.get("items")
        item_kinds = items.get("type") if isinstance(items, dict) else None
        for kind in (kinds, item_kinds):
            names = kind if isinstance(kind, list) else [kind]
            if any(k in _NUMERIC for k in names if isinstance(k, str)):
                return True
    return False


CONVERTER = "convert_units"
"""The built-in tool unit factors should come from (lar.tools.builtin.calc)."""

_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
_COMMA_DECIMAL = re.compile(r"(?<![\w.,])\d{1,3}(?:\.\d{3})*,\d+(?![\w]|[.,]\d)")
"""A figure with a decimal comma ("279,2", "1.234,5"): the number the model passes as 279.2."""


def _value(figure: str) -> float:
    return float(figure.replace(",", ""))


def _significant(figure: str) -> int:
    return len(figure.replace(",", "").replace(".", "").strip("0"))


def assumed_factors(expression: str, grounding: str, request: str = "") -> list[str]:
    """Numbers of ``expression`` with three or more significant digits and a fractional part
    (``11.374``, ``2.20462``) that the conversation does not hold, not even as a percentage of
    one of its figures (``0.17``, ``1.075``, ``0.65`` for 17 %, 7.5 % on top, 35 % off): an
    exchange rate or a price the model supplied from memory. Round factors (7, 24, 60, 0.5,
    1.8) are common knowledge and pass, and so is the factor between two common units written
    as precisely as it is known (2.20462, 0.3048) — between two units ``request`` names, when it
    names them (lar.tools.builtin.calc ``unit_factor``): a rate is made up, a unit factor is not.
    When the request names two units of one kind, the numbers the model supplied must also
    multiply to the factor between them (``3 * 7 * 24`` for weeks in hours; not ``2 * 100``
    for cups in ml)."""
    from lar.tools.builtin.calc import unit_factor, wrong_unit_factor

    known = [_value(f) for f in _NUMBER.findall(grounding)]
    known += [
        float(f.replace(".", "").replace(",", ".")) for f in _COMMA_DECIMAL.findall(grounding)
    ]

    def given(x: float) -> bool:
        forms = (x, x * 100, (1 - x) * 100, (x - 1) * 100)
        return any(abs(f - k) <= 1e-9 * max(1.0, abs(k)) for f in forms for k in known)

    out: list[str] = []
    figures = _NUMBER.findall(expression)
    for figure in figures:
        if "." not in figure or _significant(figure) < 3 or given(_value(figure)):
            continue
        if not unit_factor(figure, request):  # a unit factor the model knows is not made up
            out.append(figure)
    if not out and request:  # round factors too must convert the units the request names
        supplied = [f for f in figures if not given(_value(f))]
        if wrong_unit_factor(supplied, request):
            out = supplied
    return out


@builtin
class AssumedFactor(Policy):
    name: ClassVar[str] = "assumed_factor"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "a call to a harmless tool (the calculator, the converter) with a precise factor "
        "nobody gave that is no unit factor (an exchange rate), or with numbers that do not "
        "convert the units the request names: asked once to use the converter or to say it "
        "cannot be known here"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn):
            return ACCEPT
        grounding = turn.grounding()  # the conversation holds this run's tool results too
        for call in turn.calls:
            tool = turn.tools.get(call.name)
            if tool is None or not tool.harmless:
                continue  # a call with effects has its own checks, and the user's yes
            values = " ".join(
                str(v) for v in call.arguments.values() if isinstance(v, str | int | float)
            )
            assumed = assumed_factors(values, grounding, "\n".join(turn.requests()))
            if assumed:
                return self._ask(turn, assumed)
        return ACCEPT

    @staticmethod
    def _ask(turn: Turn, assumed: list[str]) -> Retry:
        shown = ", ".join(assumed[:3])
        units = (
            f"If it converts units or currencies, call {CONVERTER} with the amount exactly as "
            "my request gives it and both units. "
            if CONVERTER in turn.tools
            else ""
        )
        return Retry(
            Code.ASSUMED_FACTOR,
            f"the calculation uses {shown}, which no message or tool result gave",
            nudge=(
                f"{shown} is in neither my request nor any tool result. {units}If it is a "
                "rate, price or other figure that changes, you cannot know it here: say so "
                "plainly and give no figure for it. If it is a fixed constant you are sure "
                "of, reply with the same call again."
            ),
        )


_LETTERS = re.compile(r"[^\W\d_]{3,}")


def _words_of(text: str) -> set[str]:
    return {w.casefold() for w in _LETTERS.findall(text)}


@builtin
class IgnoredMemory(Policy):
    name: ClassVar[str] = "ignored_memory"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "an answer with no tool data that uses nothing of a recalled memory sharing words with "
        "the request (general advice where the user had told their own way): asked once "
        "whether the memory answers it"
    )

    async def before_answer(self, turn: Turn) -> Verdict:
        if not turn.recalled or turn.run.completed or not self.may_correct(turn):
            return ACCEPT
        # Words Lar's own prompt uses ("what", "with", "your") are no evidence of a shared
        # subject; what is left of the request and the memory must meet.
        own_prompt = turn.request[0].content.replace(turn.memory, "") if turn.request else ""
        common = _words_of(own_prompt)  # the system prompt without the memories it shows
        asked = _words_of(next(iter(turn.requests(1)), "")) - common
        answered = _words_of(turn.text)
        for line in turn.recalled:
            own = _words_of(line) - common
            rest = own - asked  # what the memory adds to the request's own words
            if own & asked and rest and not rest & answered:
                return Retry(
                    Code.IGNORED_MEMORY,
                    "the answer uses nothing of a recalled memory that shares words with the "
                    "request",
                    nudge=(
                        f"Earlier I told you: {line.lstrip('- ').strip()} If that answers my "
                        "request, answer from it in a sentence; if it does not, answer as before."
                    ),
                )
        return ACCEPT
