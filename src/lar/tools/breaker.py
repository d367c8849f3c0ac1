"""Circuit breaker per tool (T5): after 5 consecutive failures the tool is hidden from the model
for a cooldown; then one trial call is let through (half-open): success closes the circuit,
failure opens it again."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["CircuitBreaker", "State"]

State = Literal["closed", "open", "half_open"]


@dataclass(slots=True)
class _Circuit:
    failures: int = 0
    opened_at: float | None = None
    trial_running: bool = False


@dataclass
class CircuitBreaker:
    threshold: int = 5
    cooldown_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _circuits: dict[str, _Circuit] = field(default_factory=dict)

    def state(self, name: str) -> State:
        c = self._circuits.get(name)
        if c is None or c.opened_at is None:
            return "closed"
        if self.clock() - c.opened_at < self.cooldown_s:
            return "open"
        return "half_open"

    def allow(self, name: str) -> bool:
        """Whether a call may run now; in half-open state only one trial at a time."""
        state = self.state(name)
        if state == "closed":
            return True
        if state == "open":
            return False
        c = self._circuits[name]
        if c.trial_running:
            return False
        c.trial_running = True
        return True

    def record(self, name: str, ok: bool) -> None:
        c = self._circuits.setdefault(name, _Circuit())
        c.trial_running = False
        if ok:
            c.failures = 0
            c.opened_at = None
            return
        c.failures += 1
        if c.opened_at is not None or c.failures >= self.threshold:
            c.opened_at = self.clock()  # (re)open: a failed trial restarts the cooldown

    def retry_in(self, name: str) -> float:
        c = self._circuits.get(name)
        if c is None or c.opened_at is None:
            return 0.0
        return max(0.0, self.cooldown_s - (self.clock() - c.opened_at))
