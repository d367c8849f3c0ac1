"""The answer is for the user: code checks it before it is given.

- Text Lar wrote for the model (rules, nudges, the hints in a refused call's result) is cut out
  of the answer wherever the model copied it: a run of ``SHINGLE`` words shared with what Lar
  addressed to the model, and not with anything the user or a tool's data said.
- A call that was refused or failed is said plainly, by code, with how to allow it (the
  approver's ``how_to_allow``: ``--yes`` in the CLI). Code writes that account in English; for
  a request in another language one more model call rewords it (``in_request_language``), and
  the rewording is used only when it keeps every option, figure and file name of the account.
- When every call of the run failed or was refused, figures in the answer that nobody gave (not
  the user, not a tool) are an invented result: the answer becomes the account of what did not
  run instead, and so does an answer that copies the failures back. So does any answer when one
  of those calls asked for what Lar cannot do yet (a reminder before there is a scheduler): the
  tool's own account is the answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from lar.tools.executor import DEFAULT_HOW_TO_ALLOW, data_of_failure, how_to_allow
from lar.types import Code, Message, ModelResponse, Notice, ToolResult

__all__ = [
    "SHINGLE",
    "DEFAULT_HOW_TO_ALLOW",
    "Unrun",
    "Checked",
    "unrun_calls",
    "without_addressed",
    "invented_figures",
    "check_answer",
    "for_user",
    "in_request_language",
    "how_to_allow",
    "notices",
    "stopped_answer",
    "pasted",
]

SHINGLE = 6
"""Consecutive words that make a copy: long enough that ordinary phrasing does not match."""

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_RAW_ERROR = re.compile(r'\{\s*"error":[^{}]*"code":\s*"[a-z_]+"\s*\}')
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.DOTALL)
_REPORTED = frozenset(
    {
        Code.DENIED,
        Code.REFUSED,
        Code.TOOL_ERROR,
        Code.TIMEOUT,
        Code.CIRCUIT_OPEN,
        Code.NOT_ALLOWED,
        Code.NOT_POSSIBLE,
    }
)
"""Failures the user is told about: they decide what the answer could use. A wrong tool name or
bad arguments are the model's slips, corrected in the loop."""
_FAILED = frozenset({Code.TOOL_ERROR, Code.TIMEOUT, Code.CIRCUIT_OPEN})
_DENIED_WHY = re.compile(r"\): it (.+?); do not retry")


@dataclass(frozen=True, slots=True)
class Unrun:
    """A call of this run that gave no data, as the user is told of it."""

    tool: str
    code: Code
    text: str


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


@lru_cache(maxsize=1024)
def _shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Cached: the same instructions and tool listing are checked in every run."""
    words = _words(text)
    return frozenset(tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))


def without_addressed(
    answer: str, addressed: Iterable[str], said: Iterable[str]
) -> tuple[str, list[str]]:
    """``answer`` without the sentences that copy text Lar addressed to the model, and without
    a failed call's result as Lar wrote it for the model (``{"error": …, "code": …}``); and
    what was cut. ``said``: what the user and the tools' data said (a copy of it is fine)."""
    raw = _RAW_ERROR.findall(answer)
    if raw:
        answer = _RAW_ERROR.sub(" ", answer).strip()
    answer, cut = _without_copies(answer, addressed, said)
    return answer, [*raw, *cut]


def _without_copies(
    answer: str, addressed: Iterable[str], said: Iterable[str]
) -> tuple[str, list[str]]:
    theirs: set[tuple[str, ...]] = set()
    for text in said:
        theirs |= _shingles(text)
    ours: set[tuple[str, ...]] = set()
    for text in addressed:
        ours |= _shingles(text)
    ours -= theirs
    if not ours:
        return answer, []
    kept: list[str] = []
    cut: list[str] = []
    for sentence in _SENTENCE.split(answer):
        (cut if _shingles(sentence) & ours else kept).append(sentence)
    if not cut:
        return answer, []
    return _join(answer, kept), cut


def _join(original: str, kept: list[str]) -> str:
    glue = "\n" if "\n" in original else " "
    return glue.join(s for s in kept if s.strip()).strip()


_EXCEPTION = re.compile(r"^(?:[A-Z]\w*(?:Error|Exception)): ")


def _for_user(detail: str) -> str:
    """A tool's error as the user reads it: its first clause, without the exception's class
    name (what follows a ``;`` is advice to the model: "it must occur exactly once (copy…)")."""
    text = _EXCEPTION.sub("", detail.strip()).split("; ")[0].rstrip(".")
    return (text if len(text) <= 200 else text[:199] + "…") + "."


def _describe(result: ToolResult, how: str) -> str:
    error = result.error
    assert error is not None
    if error.code == Code.DENIED and "credential" in error.error:
        key = f"tools.credentials.{result.name}"
        return f"{result.name} was not run: it needs a credential ({key} in config.yaml)."
    if error.code == Code.DENIED:
        found = _DENIED_WHY.search(error.detail)
        why = f" ({found.group(1)})" if found else ""
        return f"{result.name} was not run: it needs your permission{why}. To allow it, {how}."
    if error.code == Code.REFUSED:
        reason = error.detail.split(". Do not")[0]
        return f"{result.name} was not run: Lar never runs this ({reason})."
    if error.code == Code.NOT_ALLOWED:
        return f"{result.name} was not run: this agent's allowlist does not include it."
    if error.code == Code.NOT_POSSIBLE:  # the tool's own words, written for the user
        return error.detail
    return f"{result.name} did not work: {_for_user(error.detail)}"


def _slip(result: ToolResult) -> Unrun:
    """A call that failed on the model's side (a wrong name, bad arguments)."""
    assert result.error is not None
    return Unrun(
        result.name, result.error.code, f"{result.name} could not be used ({result.error.error})."
    )


def unrun_calls(
    results: Sequence[ToolResult],
    how: str = DEFAULT_HOW_TO_ALLOW,
    reads: Iterable[str] = (),
) -> list[Unrun]:
    """The run's calls the user should hear about: refused, or failed, and not made good by a
    later successful call of the same tool. A failed read (a tool in ``reads``: it cannot
    change anything) is the model's business unless the answer is replaced: the user need not
    hear that a guessed path did not exist."""
    worked_after: set[str] = set()
    quiet = set(reads)
    found: list[Unrun] = []
    for result in reversed(results):
        if result.ok:
            worked_after.add(result.name)
            continue
        error = result.error
        if error is None or error.code not in _REPORTED or result.name in worked_after:
            continue
        if error.code in _FAILED and result.name in quiet:
            continue
        text = _describe(result, how)
        if all(u.text != text for u in found):
            found.append(Unrun(result.name, error.code, text))
    return list(reversed(found))


_FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def _says_how(answer: str, unrun: Sequence[Unrun], how: str, request: str) -> bool:
    """Whether an answer to a request in another language than English already tells the user
    how to allow what was not run: every call was only refused for want of a yes, and the
    answer carries each of the front end's own flags (``--yes``). Lar's account, in English, is
    then not added to an answer in the user's language. A front end whose way is not a flag
    (``allow it when Lar asks``), and an English request, always get the account."""
    from lar.calling.relevance import request_language

    if request_language(request) is None:
        return False
    flags = _FLAG.findall(how)
    denied = all(u.code == Code.DENIED and "credential" not in u.text for u in unrun)
    return bool(flags) and denied and all(f in answer for f in flags)


def invented_figures(answer: str, sources: Iterable[str]) -> list[str]:
    """Figures in ``answer`` that appear in none of ``sources`` (the user's words, tool data).

    Code (fenced or in backticks) and single digits are not counted: a function the model
    wrote holds figures of its own (``n % 2``), and "one" or "2 ways" are phrasing."""
    known: set[str] = set()
    for text in sources:
        known.update(_norm(f) for f in _FIGURE.findall(text))
    prose = _CODE.sub(" ", answer)
    return [f for f in _FIGURE.findall(prose) if len(f) > 1 and _norm(f) not in known]


def _norm(figure: str) -> str:
    return figure.replace(",", "").rstrip(".")


@dataclass(slots=True)
class Checked:
    text: str
    leaked: list[str]
    """Sentences cut because they copied what Lar told the model."""
    invented: list[str]
    """Figures no one gave, in an answer after every call failed (the answer was replaced)."""
    unrun: list[Unrun]
    account: str = ""
    """The part of ``text`` Lar wrote itself, in English: what did not run and how to allow it
    (``in_request_language`` puts it in the request's language)."""


def check_answer(
    answer: str,
    *,
    addressed: Iterable[str],
    said: Iterable[str],
    results: Sequence[ToolResult],
    how: str = DEFAULT_HOW_TO_ALLOW,
    reads: Iterable[str] = (),
    request: str = "",
) -> Checked:
    """The answer the user gets (see the module's docstring). ``addressed``: what Lar sent the
    model; ``said``: what may be repeated (the conversation, tool data, the listing, memory);
    ``results``: this run's calls; ``reads``: tools that cannot change anything; ``request``:
    the user's, whose language decides whether an answer's own word on how to allow a refused
    call stands for Lar's account (English: Lar's account, in English, is always added)."""
    data = [r.content for r in results if r.ok]
    said = list(said)
    text, leaked = without_addressed(answer, addressed, said)
    unrun = unrun_calls(results, how, reads)
    invented: list[str] = []
    if results and not data:  # calls were made and none gave data
        invented = invented_figures(text, said)
        if invented or any(u.code == Code.NOT_POSSIBLE for u in unrun):
            text = ""  # "Your reminder is set": what the model says then, code says better
        elif pasted(text, _failures(results)):
            text = ""  # the failures copied back ("not run: …" four times) answer nothing
        if not text.strip():  # the answer is the account: every failure counts
            unrun = unrun_calls(results, how) or [_slip(r) for r in results if r.error][-1:]
    added = ""
    if unrun:
        account = " ".join(u.text for u in unrun)
        if not text.strip():
            # says so itself: what cannot be done here, or what the user did not allow (that
            # "I could not do this here" put first, the 1.5B gave the account back in English)
            own = all(u.code in (Code.NOT_POSSIBLE, Code.DENIED) for u in unrun)
            text = added = account if own else "I could not do this here. " + account
        elif account not in text and not _says_how(text, unrun, how, request):
            text, added = f"{text}\n\n({account})", account
    elif not text.strip():
        found = [r for r in results if r.ok]
        if found:  # no answer of its own: what the last tool found, as it found it
            shown = found[-1].content
            shown = shown if len(shown) <= 1500 else shown[:1499] + "…"
            text = f"Here is what {found[-1].name} found:\n{shown}"
        elif leaked:
            text = "I have no answer to give for this request."
    return Checked(text, leaked, invented, unrun, added)


def _failures(results: Sequence[ToolResult]) -> list[str]:
    """What the failed calls said, as Lar wrote it for the model and as the tool said it."""
    said = [r.content for r in results if not r.ok]
    return [*said, *(r.error.detail for r in results if not r.ok and r.error)]


def for_user(
    answer: str,
    *,
    sent: Iterable[str],
    history: Sequence[Message],
    results: Sequence[ToolResult],
    own: Iterable[str],
    how: str = DEFAULT_HOW_TO_ALLOW,
    reads: Iterable[str] = (),
) -> Checked:
    """``check_answer`` for a run of the loop: ``sent`` is every text the model was sent this
    run; what the conversation holds (the user's and assistant's words, tool data, a failure's
    detail without its hints) and ``own`` (the system prompt, the tool listing, memory) may be
    repeated, so only the rest (rules, notes, nudges, hints) counts as addressed to the model.
    """
    said = [m.content if m.role != "tool" else data_of_failure(m.content) for m in history]
    request = next((m.content for m in reversed(history) if m.role == "user"), "")
    return check_answer(
        answer,
        addressed=sent,
        said=[*said, *own],
        results=results,
        how=how,
        reads=reads,
        request=request,
    )


ACCOUNT_PROMPT = (
    "Write this message to me in {language}, in plain words, as one short paragraph. Keep "
    "every file name, address, figure and option such as --yes exactly as written; add "
    "nothing.\n\n{account}"
)
"""The one question ``in_request_language`` asks the model."""
_KEPT = re.compile(r"(?<![\w-])--[a-z][\w-]*|\S*\d\S*|\S+\.[A-Za-z]\w*")
"""What a rewording must carry unchanged: options (``--yes``), figures and addresses, file
names (an error's number of one figure, "[Errno -2]", need not)."""
_FIGURES = re.compile(r"\d+(?:[.,]\d+)*")
"""What a rewording may not add: a figure the account does not hold."""


async def in_request_language(
    checked: Checked,
    history: Sequence[Message],
    ask: Callable[[list[Message], str], Awaitable[ModelResponse | None]],
) -> str:
    """``checked.text`` with Lar's own account (``checked.account``, English) put in the
    language of the request (the last user message of ``history``) by one question to the
    model, where the request is surely in another language (``request_language``) or too
    short to tell (``too_short_to_tell``: the model is given the request to follow). The
    rewording is kept only when it carries every option, figure, address and file name of the
    account, adds no figure and is not English itself; otherwise, or when the model cannot be
    asked, the account stays as Lar wrote it."""
    from lar.calling.prompt import clean_answer
    from lar.calling.relevance import in_embedder_language, request_language, too_short_to_tell

    request = next((m.content for m in reversed(history) if m.role == "user"), "")
    language = request_language(request) if checked.account else None
    if language is None and checked.account and too_short_to_tell(request):
        language = f'the language of my request ("{request.strip()}")'
    if language is None:
        return checked.text
    account = checked.account
    response = await ask(
        [Message("user", ACCOUNT_PROMPT.format(language=language, account=account))],
        "account_in_language",
    )
    said = clean_answer(response.content if response is not None else "").strip()
    said = re.sub(r"^[^\n]*:\s*\n+", "", said).strip()  # "Here is the message:"
    found = {k.strip(".,;:()[]\"'") for k in _KEPT.findall(account)}
    kept = {k for k in found if k and not (k.lstrip("-").isdigit() and len(k.lstrip("-")) < 2)}
    if not said or len(said) > 3 * len(account) or any(k not in said for k in kept):
        return checked.text
    figures = {k.strip(".,;:()[]\"'") for k in _FIGURES.findall(said)}
    if any(f not in account for f in figures):  # "add nothing": a figure it made up
        return checked.text
    if in_embedder_language(said):  # reworded, but still in English: Lar's own words stay
        return checked.text
    return checked.text.replace(account, said)


def stopped_answer(
    turns: int,
    wanted: str,
    results: Sequence[ToolResult],
    how: str = DEFAULT_HOW_TO_ALLOW,
    reads: Iterable[str] = (),
) -> str:
    """What the user gets when the run ran out of turns while the model still wanted ``wanted``:
    that it stopped, and the calls of the run that were refused or failed, with how to allow
    them (a denied patch, then tries with other tools to the end, must not end in a bare "I
    stopped")."""
    text = (
        f"I stopped after {turns} turns (max_turns) without a final answer; "
        f"the model still wanted to call {wanted}."
    )
    unrun = unrun_calls(results, how, reads)
    return f"{text} {' '.join(u.text for u in unrun)}" if unrun else text


def notices(checked: Checked) -> list[Notice]:
    out = []
    if checked.leaked:
        n = len(checked.leaked)
        out.append(
            Notice(Code.LEAKED_TEXT, f"cut {n} sentence(s) of Lar's instructions to the model")
        )
    if checked.invented:
        shown = ", ".join(checked.invented[:5])
        out.append(
            Notice(
                Code.INVENTED_RESULT,
                f"every call failed, yet the answer gave figures no one gave ({shown}); "
                "replaced by what did not run",
            )
        )
    return out


_RUN_MIN = 12
"""Characters a copied run must have to count ("870" or "Yes." are not output)."""


def pasted(answer: str, results: Iterable[str]) -> bool:
    """Whether ``answer`` is a tool's output given as the answer: at least 24 characters, at
    least 60 % of them in runs of 12 or more found verbatim, spaces aside, in one of the run's
    tool results, and whole lines of that result among them (12 characters or more in all) —
    "L1: 754 L2: 599 …", "wrote 8 characters to a.txt (create)", a listing's rows. An answer
    that quotes a value inside a sentence of its own is not, nor one that quotes a file's
    sentences without the read's line numbers (a summary of a short text may)."""
    shown = " ".join(answer.split())[:4000]
    if len(shown) < 24:
        return False
    for text in results:
        lines = [" ".join(line.split()) for line in text[:40_000].splitlines()]
        if _copied_chars(shown, " ".join(lines)) < 0.6 * len(shown):
            continue
        whole = sum(len(x) for x in set(lines) if any(c.isalnum() for c in x) and x in shown)
        if whole >= _RUN_MIN:
            return True
    return False


def _copied_chars(shown: str, data: str) -> int:
    """Characters of ``shown`` in runs of ``_RUN_MIN`` or more found in ``data``: from each
    place, the longest run found (substring searches, a few milliseconds for the largest
    inputs, where difflib took seconds)."""
    covered, i, n = 0, 0, len(shown)
    while i <= n - _RUN_MIN:
        if shown[i : i + _RUN_MIN] not in data:
            i += 1
            continue
        low, high = _RUN_MIN, n - i  # shown[i : i + low] is in data; find the longest
        while low < high:
            mid = (low + high + 1) // 2
            if shown[i : i + mid] in data:
                low = mid
            else:
                high = mid - 1
        covered += low
        i += low
    return covered
