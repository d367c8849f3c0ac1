"""Off-topic calls (protocol track): a call whose tool has nothing to do with the request.

Small models call *some* tool for requests no tool fits: "Which planet is closest to the sun?"
becomes ``get_weather(city="Earth")``. Asking the model whether its call fits does not help (the
1.5B says yes to 21 of 53 unrelated tools; docs/evals.md), so code decides, with the sentence
embedder memory already uses: when the first calls of a run all go to tools whose description is
further from the request than ``threshold`` (cosine similarity of all-MiniLM-L6-v2 vectors), the
calls are not run and the model is asked for the answer with the tools withheld.

Tools marked ``broad`` (Lar's built-ins: shell, files, code, web, memory) are never judged:
their descriptions cannot name what they fit, and on the dev set fitting requests score as low as
-0.004 against them. The threshold was chosen on ``evals/relevance/dev.jsonl`` (held-out
requests, not the eval suites; ``python bench/relevance.py``): the highest 0.05 step that keeps
every fitting narrow pair. Only the first calls of a run are checked; after a tool result the
next call follows from that result, not from the request's words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lar.memory.embed import Embedder
    from lar.tools.base import Tool

__all__ = ["OFF_TOPIC_BELOW", "Relevance", "tool_text"]

OFF_TOPIC_BELOW = 0.15
"""Cosine similarity under which a tool counts as unrelated to the request."""


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
    ) -> None:
        self._embedder = embedder
        self._load = load
        self.threshold = threshold

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
        embedder = self.embedder
        if not tools or not requests or embedder is None:
            return {}
        texts = [tool_text(name, description) for name, description in tools]
        vectors = embedder.encode([*requests, *texts])
        sims = (vectors[len(requests) :] @ vectors[: len(requests)].T).max(axis=1)
        return {name: float(s) for (name, _), s in zip(tools, sims, strict=True)}

    def off_topic(self, requests: Sequence[str], tools: Sequence[Tool]) -> dict[str, float] | None:
        """The scores when *every* tool is narrow and below the threshold, else None.

        ``requests`` are the user's last messages, newest first: a follow-up ("and in Faro?")
        is judged with the message it follows ("Weather in Porto?"), each tool by its best
        score. A ``broad`` tool (shell, files, code) is never judged: "Which git branch am I
        on?" scores 0.03 against the shell's description."""
        requests = [r for r in requests if r.strip()]
        if not requests or not tools or any(t.broad for t in tools):
            return None
        best = self.scores(requests, [(t.name, t.description) for t in tools])
        if best and all(s < self.threshold for s in best.values()):
            return best
        return None
