"""Per-run budgets (A2): the tokens a run may use and the wall time it may take.

Checked before every model call and every tool call; a model call in progress is also cut at
the time budget's end. A spent budget ends the run with its own stop reason
(``token_budget`` / ``time_budget``) and an answer saying so, with what the run found so far —
never an answer made up without the data.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lar.agents.answers import unrun_calls
from lar.agents.context import shorten
from lar.types import StopReason, ToolResult, Usage

__all__ = ["Budget", "Spent", "BudgetSpent", "budget_answer"]


@dataclass(frozen=True, slots=True)
class Spent:
    """A budget that ran out: which, its limit and what was used."""

    reason: StopReason
    limit: float
    used: float

    def describe(self) -> str:
        if self.reason == "token_budget":
            return f"token budget of {int(self.limit)} spent ({int(self.used)} tokens used)"
        return f"time budget of {self.limit:g} s spent ({self.used:.1f} s used)"


class BudgetSpent(Exception):
    """Raised inside a run when the time budget ends a model call in progress."""

    def __init__(self, spent: Spent) -> None:
        super().__init__(spent.describe())
        self.spent = spent


@dataclass(frozen=True, slots=True)
class Budget:
    """``tokens``: prompt + completion tokens of every model call of the run (policies'
    questions included); ``seconds``: wall time from the run's start. None: no limit."""

    tokens: int | None = None
    seconds: float | None = None

    def check(self, usage: Usage, started: float, *, tokens: bool = True) -> Spent | None:
        """The budget spent by now, if one is; ``tokens=False``: the time budget only (a tool
        call the model already asked for spends no tokens)."""
        if tokens and self.tokens is not None and usage.total_tokens >= self.tokens:
            return Spent("token_budget", self.tokens, usage.total_tokens)
        if self.seconds is not None:
            used = time.perf_counter() - started
            if used >= self.seconds:
                return Spent("time_budget", self.seconds, used)
        return None

    def left_s(self, started: float) -> float | None:
        """Seconds left of the time budget (None: no time budget)."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - (time.perf_counter() - started))

    def max_tokens(self, usage: Usage, asked: int | None) -> int | None:
        """A model call's ``max_tokens`` kept within what the token budget has left."""
        if self.tokens is None:
            return asked
        left = max(1, self.tokens - usage.total_tokens)
        return left if asked is None else min(asked, left)


def budget_answer(
    spent: Spent, results: Sequence[ToolResult], how: str, reads: Iterable[str] = ()
) -> str:
    """What the user gets when a budget ends the run: that it stopped and why, what the run's
    tools returned, and the calls that did not run."""
    text = f"I stopped before a final answer: the run's {spent.describe()}."
    found = [r for r in results if r.ok]
    if found:
        shown = "; ".join(f"{r.name}: {shorten(r.content, 160)}" for r in found[-3:])
        text += f" What the tools returned so far: {shown}"
    unrun = unrun_calls(results, how, reads)
    return f"{text} {' '.join(u.text for u in unrun)}" if unrun else text
