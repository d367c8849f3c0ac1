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

_CODE = re.compile(
    r"```|\bdef |\bclass |\bimport |\breturn\b|=>|\w+\(\)|\{\s*$|;\s*$|"
    r"\b(python|javascript|typescript|rust|golang|java|c\+\+|sql|bash|shell script|regex|"
    r"function|method|compile|compiler|refactor|debug|bug|stack ?trace|traceback|exception|"
    r"unit tests?|api|json|yaml|script|code|program|algorithm|git)\b",
    re.I | re.M,
)
_MATH = re.compile(
    r"\d\s*[-+*/^×÷]\s*\d|\b(integral|derivative|equation|solve for|prove|theorem|matrix|"
    r"probability|factorial|logarithm|sqrt|square root|percent(age)?|average|sum of|"
    r"how many|calculate|compute)\b|[∑∫√π]",
    re.I,
)
_REASONING = re.compile(
    r"\b(why|explain|reason(ing)?|analy[sz]e|compare|contrast|trade-?offs?|pros and cons|"
    r"evaluate|justify|critique|design|architecture|strategy|implications?|step by step|"
    r"think (carefully|through)|what if)\b",
    re.I,
)
_STEPS = re.compile(
    r"\b(first(ly)?|second(ly)?|then|after that|afterwards|next|finally|lastly|and then|"
    r"followed by|step \d+)\b|^\s*\d+[.)]\s",
    re.I | re.M,
)
_SUBTASK = re.compile(
    r"^\s*([-*•]|\d+[.)])\s+\S|;\s*(and\s+)?\w|\balso\b|\bas well as\b", re.I | re.M
)

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


def score(text: str) -> Complexity:
    words = len(text.split())
    has_code = bool(_CODE.search(text))
    has_math = bool(_MATH.search(text))
    has_reasoning = bool(_REASONING.search(text))
    steps = len(_STEPS.findall(text))
    questions = text.count("?") + text.count("？")
    subtasks = len(_SUBTASK.findall(text))
    length = min(words / 120, 1.0)
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
