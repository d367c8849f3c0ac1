"""Query complexity by regular expressions alone (L1): no model call, a few microseconds.

The score is a weighted sum in [0, 1]:

    length 20 % · code/math 25 % · reasoning 20 % · multi-step 15 % · question marks 10 % ·
    sub-tasks 10 %

and maps to a token-budget tier (trivial 1024 … very_complex 16384), doubled for thinking
models. ``classify`` names the query's class for the learned router (code, math, reasoning,
simple, general).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Complexity", "score", "TIERS", "tier_for", "classify", "QUERY_CLASSES"]

# Keywords are looked up in a set of the query's lower-cased words (one regex pass), phrases by
# substring, symbols by small regexes: about 5 µs for a short query.
_WORD = re.compile(r"[a-z][a-z0-9+#]*")
_CODE_WORDS = frozenset(
    "python javascript typescript rust golang java c++ sql bash regex function functions "
    "method compile compiler refactor debug bug bugs traceback exception api json yaml script "
    "code program algorithm git def class import return".split()
)
_CODE_PHRASES = ("shell script", "stack trace", "stacktrace", "unit test", "()", "```", "=>")
_CODE_LINE = re.compile(r"[{;]\s*$", re.M)
_MATH_WORDS = frozenset(
    "integral derivative equation prove theorem matrix probability factorial logarithm sqrt "
    "percent percentage average calculate compute".split()
)
_MATH_PHRASES = ("solve for", "square root", "sum of", "how many")
_MATH_SYM = re.compile(r"\d\s*[-+*/^×÷]\s*\d|[∑∫√π]")
_REASONING_WORDS = frozenset(
    "why explain reason reasoning analyze analyse compare contrast tradeoff tradeoffs evaluate "
    "justify critique design architecture strategy implication implications".split()
)
_REASONING_PHRASES = (
    "trade-off", "pros and cons", "step by step", "think carefully", "think through", "what if",
)  # fmt: skip
_STEP_WORDS = frozenset("first firstly second secondly then next finally lastly afterwards".split())
_STEP_PHRASES = ("after that", "followed by")
_STEP_LINE = re.compile(r"^\s*\d+[.)]\s|\bstep \d+", re.M)
_SUBTASK = re.compile(r"^\s*[-*•]\s+\S|;\s*\w", re.M)

TIERS: list[tuple[str, float, int]] = [
    ("trivial", 0.15, 1024),
    ("simple", 0.30, 2048),
    ("moderate", 0.50, 4096),
    ("complex", 0.70, 8192),
    ("very_complex", 1.01, 16384),
]
"""(name, score below which it applies, token budget)."""

QUERY_CLASSES = ("code", "math", "reasoning", "simple", "general")


@dataclass(frozen=True, slots=True)
class Complexity:
    score: float
    has_code: bool
    has_math: bool
    has_reasoning: bool
    steps: int
    questions: int
    subtasks: int

    @property
    def tier(self) -> str:
        return tier_for(self.score)[0]

    def budget(self, *, thinking: bool = False) -> int:
        return tier_for(self.score)[1] * (2 if thinking else 1)


def tier_for(value: float) -> tuple[str, int]:
    for name, below, budget in TIERS:
        if value < below:
            return name, budget
    return TIERS[-1][0], TIERS[-1][2]


def _hits(low: str, words: list[str], vocab: frozenset[str], phrases: tuple[str, ...]) -> int:
    return sum(1 for w in words if w in vocab) + sum(low.count(p) for p in phrases)


def score(text: str) -> Complexity:
    low = text.lower()
    words = _WORD.findall(low)
    has_code = bool(
        any(w in _CODE_WORDS for w in words)
        or any(p in low for p in _CODE_PHRASES)
        or _CODE_LINE.search(text)
    )
    has_math = bool(
        any(w in _MATH_WORDS for w in words)
        or any(p in low for p in _MATH_PHRASES)
        or _MATH_SYM.search(text)
    )
    has_reasoning = _hits(low, words, _REASONING_WORDS, _REASONING_PHRASES) > 0
    steps = _hits(low, words, _STEP_WORDS, _STEP_PHRASES) + len(_STEP_LINE.findall(low))
    questions = text.count("?") + text.count("？")
    subtasks = len(_SUBTASK.findall(text)) + sum(1 for w in words if w == "also")
    subtasks += low.count("as well as")
    length = min(len(text.split()) / 120, 1.0)
    domain = 0.7 if has_code else 0.6 if has_math else 0.0
    if has_code and has_math:
        domain = 1.0
    value = (
        0.20 * length
        + 0.25 * domain
        + 0.20 * (1.0 if has_reasoning else 0.0)
        + 0.15 * min(steps / 3, 1.0)
        + 0.10 * min(max(questions - 1, 0) / 2, 1.0)
        + 0.10 * min(subtasks / 3, 1.0)
    )
    return Complexity(
        round(min(value, 1.0), 4), has_code, has_math, has_reasoning, steps, questions, subtasks
    )


def classify(c: Complexity) -> str:
    """The query class the learned router keys on."""
    if c.has_code:
        return "code"
    if c.has_math:
        return "math"
    if c.has_reasoning:
        return "reasoning"
    if c.score < 0.20:
        return "simple"
    return "general"
