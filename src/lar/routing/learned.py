"""The learned router (L3): query class → the model that did best there, learned from traces.

``train`` groups every traced run by (query class, model) and scores each group

    composite = 0.6 · success rate + 0.4 · mean feedback

with feedback +1/−1 mapped to 1/0 (a group without feedback counts 0.5, neutral). Only groups
with at least ``min_samples`` runs compete; mean reward (L4) breaks ties. The winners go into
the ``router_policy`` table of ``lar.db``; a class without a winner is left to the heuristic
router, and so is a class whose winner is no longer configured.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lar.db import shared
from lar.engines.catalog import ModelInfo
from lar.routing.base import RouteContext, RouterPolicy, RouterRegistry
from lar.routing.heuristic import HeuristicRouter
from lar.traces.store import TraceStore

__all__ = ["LearnedRouter", "ModelScore", "PolicyStore", "train"]

POLICY_SCHEMA = """
CREATE TABLE IF NOT EXISTS router_policy (
    query_class TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    composite REAL NOT NULL,
    samples INTEGER NOT NULL,
    trained REAL NOT NULL
);
"""


@dataclass(slots=True)
class ModelScore:
    query_class: str
    model: str
    samples: int = 0
    successes: int = 0
    feedback_sum: float = 0.0
    feedback_count: int = 0
    reward_sum: float = 0.0

    @property
    def success_rate(self) -> float:
        return self.successes / self.samples if self.samples else 0.0

    @property
    def feedback(self) -> float:
        """Mean feedback mapped to [0, 1]; 0.5 when nobody said anything."""
        if not self.feedback_count:
            return 0.5
        return (self.feedback_sum / self.feedback_count + 1) / 2

    @property
    def composite(self) -> float:
        return 0.6 * self.success_rate + 0.4 * self.feedback

    @property
    def mean_reward(self) -> float:
        return self.reward_sum / self.samples if self.samples else 0.0


@dataclass(slots=True)
class PolicyEntry:
    query_class: str
    model: str
    composite: float
    samples: int
    trained: float


class PolicyStore:
    def __init__(self, path: Path) -> None:
        self.db = shared(path, POLICY_SCHEMA, "routing")

    def close(self) -> None:
        self.db.close()

    def load(self) -> dict[str, PolicyEntry]:
        rows = self.db.execute(
            "SELECT query_class, model, composite, samples, trained FROM router_policy"
        ).fetchall()
        return {r[0]: PolicyEntry(*r) for r in rows}

    def save(self, entries: Sequence[PolicyEntry]) -> None:
        with self.db.transaction():
            self.db.execute("DELETE FROM router_policy")
            self.db.executemany(
                "INSERT INTO router_policy VALUES (?, ?, ?, ?, ?)",
                [(e.query_class, e.model, e.composite, e.samples, e.trained) for e in entries],
            )


def scores(store: TraceStore) -> list[ModelScore]:
    groups: dict[tuple[str, str], ModelScore] = {}
    for row in store.samples():
        key = (row["query_class"], row["model"])
        s = groups.get(key) or groups.setdefault(key, ModelScore(*key))
        s.samples += 1
        s.successes += int(row["success"])
        s.reward_sum += row["reward"] or 0.0
        if row["feedback"] is not None:
            s.feedback_sum += row["feedback"]
            s.feedback_count += 1
    return sorted(groups.values(), key=lambda s: (s.query_class, -s.composite, s.model))


def train(
    store: TraceStore, policy: PolicyStore, *, min_samples: int = 5
) -> tuple[list[ModelScore], dict[str, PolicyEntry], dict[str, PolicyEntry]]:
    """Learn the policy from every trace; returns (all scores, old policy, new policy)."""
    table = scores(store)
    by_class: dict[str, list[ModelScore]] = defaultdict(list)
    for s in table:
        if s.samples >= min_samples:
            by_class[s.query_class].append(s)
    now = time.time()
    new = {}
    for cls, group in by_class.items():
        best = max(group, key=lambda s: (round(s.composite, 9), s.mean_reward, s.samples))
        new[cls] = PolicyEntry(cls, best.model, round(best.composite, 4), best.samples, now)
    old = policy.load()
    policy.save(list(new.values()))
    return table, old, new


@RouterRegistry.register("learned")
class LearnedRouter(RouterPolicy):
    """The trained table where it is confident; the heuristic router elsewhere."""

    name = "learned"

    def __init__(
        self,
        candidates: Sequence[ModelInfo],
        default: str,
        policy: dict[str, PolicyEntry] | None = None,
        min_samples: int = 5,
    ) -> None:
        super().__init__(candidates, default)
        self.policy = policy or {}
        self.min_samples = min_samples
        self.fallback = HeuristicRouter(candidates, default)

    def select(self, ctx: RouteContext) -> tuple[str, str, str]:
        cls = ctx.query_class
        entry = self.policy.get(cls)
        names = {c.name for c in self.candidates}
        if entry is not None and entry.samples >= self.min_samples and entry.model in names:
            return (
                entry.model,
                f"learned:{cls}",
                f"learned: class {cls} → {entry.model} "
                f"(composite {entry.composite:.2f} over {entry.samples} runs)",
            )
        model, rule, reason = self.fallback.select(ctx)
        if entry is None:
            why = "not learned yet"
        elif entry.model not in names:
            why = f"learned {entry.model}, which is not a candidate now"
        else:
            why = f"has {entry.samples} < {self.min_samples} runs"
        return model, rule, f"class {cls} {why}; heuristic: {reason}"
