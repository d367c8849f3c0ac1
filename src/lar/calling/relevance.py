"""Off-topic calls: a call whose tool has nothing to do with the request.

Small models call *some* tool for requests no tool fits: "How tall is Mount Kilimanjaro?"
becomes ``get_weather(city="Kilimanjaro")``. ``Relevance.judge`` gives each of a run's first calls
a verdict: unrelated when its tool's description is further from the request than ``threshold``
(cosine similarity of all-MiniLM-L6-v2 vectors, the sentence embedder memory already uses). What
is done about a verdict is the policies' (lar.agents.policies: ``off_topic``,
``ungrounded_values``).

The embedder was trained on English text: for a request in another language a fitting tool can
score as low as an unrelated one ("Como está o tempo em Lisboa?" scores 0.07 against a weather
tool). ``in_embedder_language`` tells the policies when a low score is evidence and when it is
only a reason to ask.

Tools marked ``broad`` (Lar's built-ins: shell, files, code, web, memory) are never judged:
their descriptions cannot name what they fit, and on the dev set fitting requests score as low as
-0.004 against them. The threshold was chosen on ``evals/relevance/dev.jsonl`` (held-out
requests, not the eval suites; ``python bench/relevance.py``): the highest 0.05 step that keeps
every fitting narrow pair. Only the first calls of a run are checked; after a tool result the
next call follows from that result, not from the request's words.

A second signal catches unrelated calls that share a word with the request: the model had to
invent a required value. Below ``GROUNDED_ABOVE`` a call is judged too when a required free-text
or number argument holds a value found nowhere in the conversation or memory
(``to="friend@example.com"`` for "Greet me."). Above the band, a fitting request often needs a
value it does not spell out ("a week" → ``days=7``, "yen" → ``JPY``), so values are not checked
there. The band was checked on held-out calls (evals/relevance/grounding.jsonl;
``bench/relevance.py --calls``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lar.memory.embed import Embedder
    from lar.tools.base import Tool

__all__ = [
    "OFF_TOPIC_BELOW",
    "GROUNDED_ABOVE",
    "OffTopic",
    "Relevance",
    "tool_text",
    "ungrounded",
    "placeholders",
    "invented_options",
    "in_embedder_language",
    "request_language",
    "request_language_code",
    "too_short_to_tell",
]

OFF_TOPIC_BELOW = 0.15
"""Cosine similarity under which a tool counts as unrelated to the request."""

GROUNDED_ABOVE = 0.4
"""Under this similarity, a call with an invented required value counts as unrelated too."""

_NUMBER_WORDS = {
    w: float(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {
    "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "seventy": 70.0,
    "eighty": 80.0, "ninety": 90.0, "hundred": 100.0, "thousand": 1000.0, "dozen": 12.0,
}  # fmt: skip
_STOP = frozenset("the and for you your with that this from are was".split())


_ENGLISH = frozenset(
    """a about after all am an and any are as at be been before but by can could did do does
    for from get give had has have he her his how i if in into is it its just let like many me
    more most much my need no not now of off on one or our out over please say set she should
    show so some tell than that the their them then there these they this to today too up us
    was we were what when where which who why will with would you your""".split()
)
"""Frequent English words: the embedder (all-MiniLM-L6-v2) was trained on English text."""


_LANGUAGES = (
    "en pt es fr de it nl sv da no fi pl cs sk hu ro tr ru uk el bg sr hr sl lt lv et ca eu zh "
    "ja ko ar he fa hi bn th vi id ms tl sw"
).split()
"""What the language identifier chooses among: the languages most users write, without the
regional ones it confuses with English on short commands ("Convert 5 euros to dollars" came
out Galician)."""


def in_embedder_language(text: str) -> bool:
    """Whether the embedder's similarity can be trusted for ``text``: two signals must agree
    that it is English. At least a fifth of its words are frequent English words (German
    "Was ist das Wetter in Berlin?" has two), and a language identifier (py3langid, trained on
    97 languages) says English. When either says no, or the identifier is not installed, a low
    score is only a reason to ask: elsewhere (Portuguese, Chinese …) a fitting tool can score as
    low as an unrelated one."""
    words = re.findall(r"[^\W\d_]+", text.casefold())
    if not words:
        return False
    hits = sum(1 for w in words if w in _ENGLISH)
    if not (hits >= 1 and hits >= len(words) / 5):
        return False
    identify = _identifier()
    return identify is not None and identify(text) == "en"


_NAMES = {
    "en": "English", "pt": "Portuguese", "es": "Spanish", "fr": "French", "de": "German",
    "it": "Italian", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
    "fi": "Finnish", "pl": "Polish", "cs": "Czech", "sk": "Slovak", "hu": "Hungarian",
    "ro": "Romanian", "tr": "Turkish", "ru": "Russian", "uk": "Ukrainian", "el": "Greek",
    "bg": "Bulgarian", "sr": "Serbian", "hr": "Croatian", "sl": "Slovenian",
    "lt": "Lithuanian", "lv": "Latvian", "et": "Estonian", "ca": "Catalan", "eu": "Basque",
    "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "ar": "Arabic", "he": "Hebrew",
    "fa": "Persian", "hi": "Hindi", "bn": "Bengali", "th": "Thai", "vi": "Vietnamese",
    "id": "Indonesian", "ms": "Malay", "tl": "Tagalog", "sw": "Swahili",
}  # fmt: skip
"""The identifier's languages (``_LANGUAGES``) by their English names, as an instruction
names them."""

SURE = 0.8
"""The identifier's probability a request's language must reach to be named: on a dev draw's
72 requests in six languages, the three it got wrong were all below it (0.26–0.76)."""

_NOT_SPACED = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
"""Chinese, Japanese and Korean characters and their punctuation: written without spaces, so
a file name or a figure in such a request is bounded by them, not by a space."""
_UNWORDS = re.compile(rf"[^\s{_NOT_SPACED}]*(?:\d|[/\\_@{{}}]|\.\w)[^\s{_NOT_SPACED}]*")
"""File names, paths, figures, addresses and placeholders: in no language. (Bounded by spaces
only, "yusuan.txt一共几行？" was taken whole, and no Chinese request with a figure or a file
name in it was ever named.)"""


def request_language(text: str) -> str | None:
    """The English name of the language ``text`` is written in, where that is not English
    and the identifier is sure of it (``SURE``); None otherwise (English, unsure, too short,
    or py3langid missing) — an instruction then names no language, as before."""
    code = request_language_code(text)
    return None if code is None else _NAMES.get(code)


SHORT = 4  # words (file names and figures aside) up to which the identifier is rarely sure
LIKELY = 0.5
"""Above it a short request is likely in the identifier's language: "Vacía compras.md." (es
0.53), not "Delete notes.md." (hu 0.15) — nor "Supprime courses.md." (it 0.19), missed."""


def too_short_to_tell(text: str) -> bool:
    """Whether ``text`` has ``SHORT`` words or fewer and is ``LIKELY`` not English (half its
    words common English ones: English). Whoever acts on it must accept English as outcome."""
    words = _UNWORDS.sub(" ", text)
    if not words.strip() or len(words.split()) > SHORT or in_embedder_language(text):
        return False
    letters = re.findall(r"[^\W\d_]+", words.casefold())
    if sum(w in _ENGLISH for w in letters) * 2 >= len(letters):
        return False  # "Copy notes.md to plans.md": half its words are common English ones
    code, probability = rank(words) if (rank := _ranker()) is not None else ("en", 0.0)
    return code != "en" and probability >= LIKELY


@functools.lru_cache(maxsize=256)
def request_language_code(text: str) -> str | None:
    """``request_language`` as the identifier's ISO 639-1 code ("pt", "zh")."""
    words = _UNWORDS.sub(" ", text)
    if len(words.strip()) < 4 or in_embedder_language(words):
        return None
    rank = _ranker()
    if rank is None:
        return None
    code, probability = rank(words)
    if code == "en" or probability < SURE or code not in _NAMES:
        return None
    return code


_MODEL: list[Any] = []


def _model() -> Any:
    """py3langid's classifier with probabilities over ``_LANGUAGES``, loaded once; None when
    the package is missing."""
    if not _MODEL:
        try:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier
        except ImportError:
            _MODEL.append(None)
        else:
            model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            model.set_languages(_LANGUAGES)
            _MODEL.append(model)
    return _MODEL[0]


def _ranker() -> Callable[[str], tuple[str, float]] | None:
    """The most likely language of a text and its probability; None when py3langid is
    missing."""
    model = _model()
    if model is None:
        return None

    def rank(text: str) -> tuple[str, float]:
        code, probability = model.classify(text)
        return str(code), float(probability)

    return rank


def language_share(text: str, names: frozenset[str]) -> float:
    """How sure py3langid is that ``text`` is in one of the languages ``names`` (English
    names, as ``request_language`` gives them): the sum of their probabilities, figures,
    file names and addresses left out; 0.0 when the package is missing or nothing is left.
    Several languages that share a trait ("Quanto dá 32% de 8.634?": Portuguese, Spanish or
    Italian) are together sure where no one of them is."""
    words = _UNWORDS.sub(" ", text)
    model = _model()
    if not words.strip() or model is None:
        return 0.0
    return float(sum(p for code, p in model.rank(words) if _NAMES.get(code) in names))


_IDENTIFIER: list[Callable[[str], str] | None] = []


def _identifier() -> Callable[[str], str] | None:
    """py3langid's classifier over ``_LANGUAGES``, loaded once (about a second); None when the
    package is missing."""
    if not _IDENTIFIER:
        try:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier
        except ImportError:
            _IDENTIFIER.append(None)
        else:
            model = LanguageIdentifier.from_model_file(MODEL_FILE)
            model.set_languages(_LANGUAGES)
            _IDENTIFIER.append(lambda text: str(model.classify(text)[0]))
    return _IDENTIFIER[0]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _numbers(text: str) -> set[float]:
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,000 → 1000
    found = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)}
    return found | {_NUMBER_WORDS[w] for w in _words(text) if w in _NUMBER_WORDS}


_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _squash(text: str) -> str:
    return re.sub(r"\W+", "", text.casefold())


def _grounded(value: Any, context: str, words: set[str], numbers: set[float]) -> bool:
    """Whether the conversation holds this value: the number itself; a one-word value (a
    name, symbol, address) whole, with any spacing; a time or date by its non-zero numbers
    (one of three may be missing: a month's name);
    free text by one of its content words.
    ``friend@example.com`` is not held by "my friend's address is rui@example.org"."""
    if isinstance(value, list) and value and all(isinstance(v, (int, float, str)) for v in value):
        return all(_grounded(v, context, words, numbers) for v in value)  # packed items
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return True  # flags, objects and other lists are not judged
    if not isinstance(value, str):
        digits = _squash(str(value))  # a long number written with spaces: +44 7700 900123
        return float(value) in numbers or (len(digits) >= 4 and digits in _squash(context))
    tokens = _words(value)
    if _UNSPACED.search(value):  # Chinese, Japanese, Korean: no spaces to find words by
        return _squash(value) in _squash(context)
    if len(value.split()) == 1:  # a word, name, symbol, address or number: all of it
        squashed = _squash(value)
        if not squashed or tokens <= words:
            return True
        if len(squashed) >= 3 and any(w.startswith(squashed) for w in words):
            return True  # "EUR" for "euros"
        if re.fullmatch(r"[\d:./-]+", value):  # a time or date: "07:00" for "seven am"
            parts = {float(n) for n in re.findall(r"\d+", value)} - {0.0}
            found = parts & numbers
            # all its numbers, or all but one of three: a month written as a word, in any
            # language ("2023-04-25" for "April 25th 2023", "25 de abril de 2023")
            if parts and (found == parts or (len(parts) >= 3 and len(found) >= len(parts) - 1)):
                return True
        return len(squashed) > 3 and squashed in _squash(context)  # +44 7700 900123
    content = {t for t in tokens if len(t) >= 3 and t not in _STOP}
    if content:  # free text (a body, a title) is reworded: one content word is enough
        return bool(content & words)
    return tokens <= words


def ungrounded(tool: Tool, arguments: Mapping[str, Any], context: str) -> list[str]:
    """Required free-text or number arguments whose value ``context`` (the conversation and
    memory) does not hold: ``["to"]`` for ``send_email(to="friend@example.com", …)`` after
    "Greet me.". Enums, flags, lists and objects are not judged."""
    schema = tool.parameters
    props = schema.get("properties", {})
    words, numbers = _words(context), _numbers(context)
    out = []
    for name in schema.get("required", []):
        spec = props.get(name, {})
        if not isinstance(spec, dict) or "enum" in spec or "const" in spec:
            continue
        if spec.get("type") not in ("string", "integer", "number") or name not in arguments:
            continue
        value = arguments[name]
        if not _grounded(value, context, words, numbers) or _describes(name, value, context):
            out.append(name)
    return out


def invented_options(tool: Tool, arguments: Mapping[str, Any], context: str) -> list[str]:
    """Optional free-text or number arguments (or ones the tool does not take at all) given a
    value ``context`` does not hold and that is not the parameter's default: ``end_line=1``
    for "What version does pyproject.toml declare?" (the tool's own default applies when it is
    left out). Enums, flags, lists and objects are not judged."""
    schema = tool.parameters
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    words, numbers = _words(context), _numbers(context)
    out = []
    for name, value in arguments.items():
        spec = props.get(name)
        if spec is None and not isinstance(value, dict | list | bool):
            # An argument the tool does not take (another tool's ``max_chars=4000``): left out
            # unless the request gave its value, then the tool's error tells the model.
            if not _grounded(value, context, words, numbers):
                out.append(name)
            continue
        if name in required or not isinstance(spec, dict) or isinstance(value, bool):
            continue
        if not _scalar_types(spec) or ("default" in spec and spec["default"] == value):
            continue
        if not _grounded(value, context, words, numbers):
            out.append(name)
    return out


def _scalar_types(spec: dict[str, Any]) -> bool:
    """A free-text or number parameter, maybe nullable (``int | None``); not an enum."""
    options = spec.get("anyOf") or spec.get("oneOf") or [spec]
    kinds = set()
    for option in options:
        if not isinstance(option, dict) or "enum" in option or "const" in option:
            return False
        kinds.add(option.get("type"))
    kinds.discard("null")
    return bool(kinds) and kinds <= {"string", "integer", "number"}


def _describes(name: str, value: Any, context: str) -> bool:
    """Whether a value describes what it should be instead of being it: several words, one of
    them the parameter's own name, and not written so in the conversation (``city="Marta's
    city"``, ``date="the trip date"``; ``city="New York City"`` after "weather in New York
    City?" is a value). What another tool should have found first."""
    if not isinstance(value, str) or len(value.split()) < 2 or _UNSPACED.search(value):
        return False
    named = {w for w in re.split(r"_|(?<=[a-z])(?=[A-Z])", name) if len(w) >= 3}
    return bool({w.casefold() for w in named} & _words(value)) and (
        _squash(value) not in _squash(context)
    )


def placeholders(tool: Tool, arguments: Mapping[str, Any], context: str) -> list[str]:
    """Required text arguments whose value describes itself (``_describes``)."""
    props = tool.parameters.get("properties", {})
    return [
        n
        for n in tool.parameters.get("required", [])
        if isinstance(props.get(n), dict)
        and props[n].get("type") == "string"
        and "enum" not in props[n]
        and n in arguments
        and _describes(n, arguments[n], context)
    ]


@dataclass(frozen=True, slots=True)
class OffTopic:
    """Why a call was judged unrelated: its tool's similarity to the request, and the required
    arguments it had to invent (empty when the similarity alone decided)."""

    score: float
    invented: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.invented:
            return f"{self.score:.2f}"
        return f"{self.score:.2f}, {', '.join(self.invented)} not in the conversation"


def tool_text(name: str, description: str) -> str:
    """What the request is compared with: the tool's description, first paragraph."""
    first = description.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) or name.replace("_", " ")


class Relevance:
    """Scores tools against a request with a sentence embedder.

    ``load`` builds the embedder on first use (loading all-MiniLM-L6-v2 takes a moment, and a
    run without tool calls never needs it); when it returns None the check is off."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        threshold: float = OFF_TOPIC_BELOW,
        *,
        load: Callable[[], Embedder | None] | None = None,
        grounded_above: float = GROUNDED_ABOVE,
    ) -> None:
        self._embedder = embedder
        self._load = load
        self.threshold = threshold
        self.grounded_above = max(grounded_above, threshold)

    @property
    def embedder(self) -> Embedder | None:
        if self._embedder is None and self._load is not None:
            self._embedder, self._load = self._load(), None
        return self._embedder

    def scores(
        self, request: str | Sequence[str], tools: Sequence[tuple[str, str]]
    ) -> dict[str, float]:
        """Cosine similarity of each (name, description) to the request, or its best over
        several requests; {} without an embedder. One encode call for all texts."""
        requests = [request] if isinstance(request, str) else list(request)
        if not tools or not requests:
            return {}
        embedder = self.embedder
        if embedder is None:
            return {}
        texts = [tool_text(name, description) for name, description in tools]
        vectors = embedder.encode([*requests, *texts])
        sims = (vectors[len(requests) :] @ vectors[: len(requests)].T).max(axis=1)
        return {name: float(s) for (name, _), s in zip(tools, sims, strict=True)}

    def judge(
        self,
        requests: Sequence[str],
        calls: Sequence[tuple[Tool, Mapping[str, Any]]],
        context: str = "",
    ) -> list[OffTopic | None]:
        """Per call not clearly about the request (its tool scores below ``grounded_above``):
        its score and the required values found nowhere in ``context`` (the requests are
        always part of it); for a call that is, the values that describe themselves
        (``city="Marta's city"``), and None when there is none. Whether a call is unrelated
        is for the caller (``unrelated``; the policies of lar.agents.policies).

        ``requests`` are the user's last messages, newest first: a follow-up ("and in Braga?")
        is judged with the message it follows ("Weather in Coimbra?"), each tool by its best
        score. A ``broad`` tool (shell, files, code) is never judged: "Which git branch am I
        on?" scores 0.03 against the shell's description."""
        requests = [r for r in requests if r.strip()]
        narrow = {t.name: t for t, _ in calls if not t.broad}
        best = self.scores(requests, [(t.name, t.description) for t in narrow.values()])
        if not best:  # nothing to judge (no request, only broad tools) or no embedder
            return [None] * len(calls)
        text = "\n".join([*requests, context])
        out: list[OffTopic | None] = []
        for tool, arguments in calls:
            score = best.get(tool.name)
            if score is None:  # broad
                out.append(None)
            elif score < self.grounded_above:
                out.append(OffTopic(score, tuple(ungrounded(tool, arguments, text))))
            else:  # clearly about the request: only a value that describes itself is doubted
                described = tuple(placeholders(tool, arguments, text))
                out.append(OffTopic(score, described) if described else None)
        return out

    def unrelated(self, verdict: OffTopic) -> bool:
        """A call unrelated by the similarity alone: scored below the threshold, or, not
        clearly about the request, with a value it had to invent."""
        return verdict.score < self.threshold or bool(verdict.invented)

    def off_topic(
        self,
        requests: Sequence[str],
        calls: Sequence[tuple[Tool, Mapping[str, Any]]],
        context: str = "",
    ) -> dict[str, OffTopic] | None:
        """Why each call is unrelated (by tool name) when *every* call is, else None."""
        verdicts = [
            v if v is not None and self.unrelated(v) else None
            for v in self.judge(requests, calls, context)
        ]
        if not calls or any(v is None for v in verdicts):
            return None
        return {t.name: v for (t, _), v in zip(calls, verdicts, strict=True) if v is not None}
