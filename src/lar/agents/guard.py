"""Loop guard (A3): stop a model that repeats itself instead of making progress."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, deque

from lar.types import ToolCall

__all__ = ["LoopGuard", "call_hash"]


def call_hash(call: ToolCall) -> str:
    """SHA-256 of (tool, canonical arguments)."""
    canonical = json.dumps([call.name, call.arguments], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class LoopGuard:
    """Blocks the same call more than ``max_repeats`` times and A-B-A-B ping-pong.

    ``check`` returns None to allow the call, or an explanation for the model.
    """

    def __init__(self, *, max_repeats: int = 3, window: int = 6) -> None:
        self.max_repeats = max_repeats
        self.counts: Counter[str] = Counter()
        self.recent: deque[str] = deque(maxlen=window)

    def check(self, call: ToolCall) -> str | None:
        h = call_hash(call)
        if self.counts[h] >= self.max_repeats:
            return (
                f"blocked: {call.name} with these arguments already ran {self.counts[h]} times; "
                "its result will not change. Use the earlier result or answer the user now."
            )
        recent = [*self.recent, h]
        if len(recent) >= 4:
            a, b, c, d = recent[-4:]
            if a == c and b == d and a != b:
                return (
                    f"blocked: you are alternating between the same two calls ({call.name} and "
                    "another) without progress. Stop and answer with what you have."
                )
        self.counts[h] += 1
        self.recent.append(h)
        return None
