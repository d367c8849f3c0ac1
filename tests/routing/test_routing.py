"""Complexity scorer (L1), heuristic router (L2), learned router (L3), reward (L4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lar.engines.catalog import ModelInfo
from lar.routing import RouteContext
from lar.routing.complexity import score, tier_for
from lar.routing.heuristic import HeuristicRouter
from lar.routing.learned import LearnedRouter, PolicyStore, train
from lar.traces import Trace, TraceStore
from lar.traces.reward import reward

SMALL = ModelInfo("small", 0.5, 4096, False, frozenset())
CODER = ModelInfo("coder", 1.5, 4096, False, frozenset({"code"}))
BIG = ModelInfo("big", 7.0, 8192, True, frozenset({"reasoning"}))
MID = ModelInfo("mid", 3.0, 8192, False, frozenset())


def router() -> HeuristicRouter:
    return HeuristicRouter([SMALL, CODER, BIG, MID], default="mid")


def test_scores_grow_with_what_the_query_asks_for() -> None:
    trivial = score("hi there")
    code = score("Write a Python function that parses a CSV file.")
    hard = score(
        "Explain why the cache misses. First profile the service, then compare the two "
        "designs; also estimate the cost. Finally write it up. What changed? Why now?"
    )
    assert trivial.score < 0.05 and trivial.tier == "trivial" and not trivial.has_code
    assert code.has_code and not code.has_reasoning
    assert hard.has_reasoning and hard.steps >= 3 and hard.questions == 2
    assert trivial.score < code.score < hard.score <= 1.0
    assert tier_for(0.0) == ("trivial", 1024) and tier_for(0.99) == ("very_complex", 16384)
    assert hard.budget(thinking=True) == 2 * hard.budget()


@pytest.mark.parametrize(
    ("query", "urgency", "model", "rule"),
    [
        # rule 1 beats everything, even a code query
        ("Write a Python function that reverses a list.", 0.9, "small", "urgent"),
        ("Write a Python function that reverses a list.", 0.0, "coder", "code"),
        ("What is 1234 * 5678?", 0.0, "big", "math"),
        ("hi", 0.0, "small", "simple"),
        ("Explain the trade-offs of renting versus buying a flat.", 0.0, "big", "complex"),
        (
            "First read my notes, then summarize them, and finally send the summary to Ana; "
            "also add a reminder for Friday.",
            0.0,
            "mid",
            "default",
        ),
    ],
)
def test_heuristic_rules_in_order(query: str, urgency: float, model: str, rule: str) -> None:
    d = router().decide(RouteContext.of(query, urgency))
    assert (d.model, d.rule) == (model, rule), d.reason
    assert d.router == "heuristic" and d.reason


def test_code_without_a_code_model_goes_to_the_largest_and_unknown_sizes_are_never_picked() -> None:
    unknown = ModelInfo("mystery", None, None, True)
    r = HeuristicRouter([SMALL, BIG, unknown], default="mystery")
    d = r.decide(RouteContext.of("Refactor this Python class please."))
    assert d.model == "big" and "no model tagged code" in d.reason
    assert r.decide(RouteContext.of("hi")).model == "small"


def test_reward_weights() -> None:
    assert reward(latency_s=0, cost_usd=0, completion_tokens=10, total_tokens=10) == 1.0
    assert reward(latency_s=30, cost_usd=0.01, completion_tokens=0, total_tokens=10) == 0.0
    # 0.4·0.5 + 0.3·1 + 0.3·0.25
    assert reward(latency_s=15, cost_usd=0, completion_tokens=25, total_tokens=100) == 0.575


def _seed(store: TraceStore, cls: str, model: str, n: int, ok: bool, fb: int | None) -> None:
    for i in range(n):
        tid = f"t_{model}_{cls}_{i}_{ok}"
        store.record(
            Trace(tid, 1.0, "q", "answer" if ok else "error", ok, query_class=cls, model=model)
        )
        if fb is not None:
            store.feedback(tid, fb)


def test_learning_needs_five_samples_and_weighs_success_and_feedback(lar_home: Path) -> None:
    db = lar_home / "lar.db"
    store, policy = TraceStore(db), PolicyStore(db)
    _seed(store, "simple", "small", 5, True, -1)  # 0.6·1 + 0.4·0 = 0.6
    _seed(store, "simple", "big", 5, True, 1)  # 0.6·1 + 0.4·1 = 1.0
    _seed(store, "code", "coder", 4, True, 1)  # only 4: not trusted
    table, old, new = train(store, policy, min_samples=5)
    assert old == {} and set(new) == {"simple"}
    assert new["simple"].model == "big" and new["simple"].composite == 1.0
    scores = {(s.query_class, s.model): s for s in table}
    assert scores[("simple", "small")].composite == pytest.approx(0.6)
    assert scores[("code", "coder")].samples == 4

    learned = LearnedRouter([SMALL, CODER, BIG], "coder", policy.load(), min_samples=5)
    d = learned.decide(RouteContext.of("hi"))
    assert (d.model, d.rule, d.router) == ("big", "learned:simple", "learned")
    assert "composite 1.00 over 5 runs" in d.reason
    # code has no trusted entry: the heuristic decides, and says so
    d = learned.decide(RouteContext.of("Write a Python function."))
    assert d.model == "coder" and d.reason.startswith("class code not learned yet; heuristic:")
    # a learned model that is no longer configured is not used
    gone = LearnedRouter([SMALL, CODER], "coder", policy.load()).decide(RouteContext.of("hi"))
    assert gone.model == "small" and "not a candidate" in gone.reason
    store.close()
    policy.close()


def test_failures_lower_the_composite(lar_home: Path) -> None:
    db = lar_home / "lar.db"
    store, policy = TraceStore(db), PolicyStore(db)
    _seed(store, "math", "small", 5, True, None)  # 0.6 + 0.4·0.5 = 0.8
    _seed(store, "math", "big", 3, True, None)
    _seed(store, "math", "big", 3, False, None)  # 0.6·0.5 + 0.2 = 0.5
    _, _, new = train(store, policy, min_samples=5)
    assert new["math"].model == "small" and new["math"].composite == pytest.approx(0.8)
    store.close()
    policy.close()
