"""Turns a run's event stream into a trace and telemetry records (O1, O4).

The recorder only reads events (already redacted by the agent), so the loop knows nothing about
traces. While the run goes on it only notes each event and when it came; hashing, masking,
pricing and encoding happen when the trace is built, on the store's writer thread, so a run
pays a list append per event.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from lar.engines.catalog import ModelInfo
from lar.redact import mask_strings
from lar.telemetry.records import TelemetryRecord, token_counts
from lar.traces.reward import reward
from lar.traces.store import Trace, TraceStore
from lar.types import (
    Code,
    ContextCompressed,
    ErrorEvent,
    Event,
    Final,
    MemoryRecalled,
    MemoryWritten,
    ModelCalled,
    Notice,
    Routed,
    SubTaskFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)

__all__ = ["TraceRecorder", "digest"]

_NOT_DONE = frozenset(
    {Code.DENIED, Code.REFUSED, Code.TOOL_ERROR, Code.TIMEOUT, Code.CIRCUIT_OPEN, Code.NOT_ALLOWED}
)
"""A call that did not do what was asked (the model's slips, such as bad arguments, are not
counted: the loop sends them back and the model may still get it right)."""


def digest(value: Any) -> str:
    """SHA-256 of a value's canonical JSON (sorted keys), hex."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TraceRecorder:
    """Collects one run. ``info`` maps a model name to its catalog entry (for prices).

    The events it sees are already masked by the agent; ``redact`` is for a mask beyond the
    agent's (a memory's own secrets) and is applied to the query, the steps and the answer.
    """

    def __init__(
        self,
        store: TraceStore,
        trace_id: str,
        query: str,
        *,
        session: str | None = None,
        info: Callable[[str], ModelInfo | None] = lambda name: None,
        max_latency_s: float = 30.0,
        max_cost_usd: float = 0.01,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.store = store
        self.redact = redact
        self.info = info
        self.max_latency_s = max_latency_s
        self.max_cost_usd = max_cost_usd
        self.started = time.perf_counter()
        self.trace = Trace(trace_id, time.time(), query, "running", False, session=session)
        self._calls: dict[str, tuple[float, Any, str | None]] = {}
        self._failover = False
        self._repaired = False  # the answer check cut copied instructions or invented figures
        self._unrun: set[str] = set()  # tools refused or failed, not made good later
        self._chars = 0  # streamed text, for estimating a usage-less engine's completion
        self._seen: list[tuple[float, float, Event]] = []
        self._steps: list[dict[str, Any]] = []
        self._now = self.started
        self._wall = self.trace.created
        self.done = False

    def _mask(self, text: str) -> str:
        return self.redact(text) if self.redact is not None else text

    def _offset(self) -> float:
        return round((self._now - self.started) * 1000, 3)

    def observe(self, event: Event) -> None:
        """Note an event (cheap); a ``Final`` ends the run and hands the trace to the store."""
        self._seen.append((time.perf_counter(), time.time(), event))
        if isinstance(event, Final):
            self.finish(event)

    def finish(self, final: Final | None = None) -> None:
        """End the run (once). Without a Final it was interrupted."""
        if self.done:
            return
        self.done = True
        end = (time.perf_counter(), time.time())
        self.store.record_later(lambda: self.build(final, end))

    def build(self, final: Final | None, end: tuple[float, float] | None = None) -> Trace:
        """The finished trace (the store calls this, usually on its writer thread)."""
        if self.redact is not None:
            self.trace.query = self.redact(self.trace.query)
        for now, wall, event in self._seen:
            self._now, self._wall = now, wall
            if not isinstance(event, Final):
                self._apply(event)
        if end is not None:
            self._now, self._wall = end
        trace = self._conclude(final)
        steps: Any = self._steps
        if self.redact is not None:  # masked before encoding: escapes would hide a secret
            steps = mask_strings(json.loads(json.dumps(steps, default=str)), self.redact)
        trace.steps_json = json.dumps(steps, ensure_ascii=False, default=str)
        return trace

    def _step(
        self,
        kind: str,
        name: str,
        detail: dict[str, Any],
        *,
        duration_ms: float | None = None,
        ok: bool | None = None,
        input_hash: str | None = None,
        output_hash: str | None = None,
    ) -> None:
        # Plain dicts in the shape of ``Step``: the steps are only ever encoded from here.
        self._steps.append(
            {
                "kind": kind,
                "name": name,
                "offset_ms": self._offset(),
                "duration_ms": duration_ms,
                "ok": ok,
                "input_hash": input_hash,
                "output_hash": output_hash,
                "detail": detail,
            }
        )

    def _apply(self, event: Event) -> None:
        if isinstance(event, ModelCalled):
            self._model_called(event)
        elif isinstance(event, SubTaskFinished):
            self._subtask(event)
        else:
            self._apply_other(event)

    def _apply_other(self, event: Event) -> None:
        t = self.trace
        if isinstance(event, TextDelta):
            self._chars += len(event.text)
        elif isinstance(event, Routed):
            t.model, t.router, t.rule, t.reason = (
                event.model,
                event.router,
                event.rule,
                event.reason,
            )
            t.query_class, t.complexity = event.query_class, event.complexity
            self._step(
                "route",
                event.model,
                {
                    "router": event.router,
                    "rule": event.rule,
                    "reason": event.reason,
                    "class": event.query_class,
                    "complexity": event.complexity,
                    "tier": event.tier,
                    "budget": event.budget,
                },
            )
        elif isinstance(event, ToolCallStarted):
            self._calls[event.call.id] = (
                self._offset(),
                event.call.arguments,
                event.call.raw,
            )
        elif isinstance(event, ToolCallFinished):
            r = event.result
            if r.ok:
                self._unrun.discard(r.name)
            elif r.error is not None and r.error.code in _NOT_DONE:
                self._unrun.add(r.name)
            _, args, raw = self._calls.pop(r.call_id, (0.0, None, None))
            self._step(
                "tool",
                r.name,
                {
                    "arguments": args,
                    "raw": raw,
                    "result": r.content[:500],
                    "error": r.error.code if r.error else None,
                },
                duration_ms=round(event.duration_ms, 3),
                ok=r.ok,
                input_hash=digest(args if args is not None else {}),
                output_hash=digest(r.content),
            )
        elif isinstance(event, MemoryRecalled):
            self._step(
                "recall",
                f"{len(event.items)} memories",
                {"items": [i.get("id") for i in event.items]},
                duration_ms=round(event.duration_ms, 3),
            )
        elif isinstance(event, MemoryWritten):
            self._step("memory", event.action, {"id": event.memory_id, "reason": event.reason})
        elif isinstance(event, ContextCompressed):
            self._step(
                "context",
                event.part,
                {"before": event.before, "after": event.after, "detail": event.detail},
            )
        elif isinstance(event, Notice):
            if event.code == "failover":
                self._failover = True
            if event.code in (Code.LEAKED_TEXT, Code.INVENTED_RESULT):
                self._repaired = True
            self._step("notice", event.code, {"message": event.message})
        elif isinstance(event, ErrorEvent):
            t.error = self._mask(event.message)
            self._step("error", event.code, {"message": event.message}, ok=False)

    def _subtask(self, e: SubTaskFinished) -> None:
        """A delegate's sub-agent ended: its status, reason and child run (``lar trace``)."""
        self._step(
            "subtask",
            e.agent,
            {
                "id": e.id,
                "status": e.status,
                "reason": self._mask(e.reason),
                "run": e.run_id,
                "result": self._mask(e.text[:500]),
            },
            duration_ms=round((e.ended - e.started) * 1000, 3),
            ok=e.status == "success",
        )

    def _model_called(self, e: ModelCalled) -> None:
        t = self.trace
        info = (self.info(e.source) if e.source else None) or self.info(e.model)
        prompt, completion, method = token_counts(
            e.usage.prompt_tokens, e.usage.completion_tokens, 0, self._chars
        )
        self._chars = 0
        cost = info.cost(prompt, completion) if info is not None else 0.0
        record = TelemetryRecord(
            t.id,
            e.turn,
            self._wall,
            e.model,
            e.engine,
            round(e.timings.latency_ms, 3),
            e.timings.ttft_ms,
            prompt,
            completion,
            method,
            cost,
            e.energy_j,
            e.power_w,
            e.timings.prompt_ms,
            e.timings.decode_ms,
        )
        t.telemetry.append(record)
        t.answered_by = e.model
        t.prompt_tokens += prompt
        t.completion_tokens += completion
        t.cost_usd += cost
        if e.energy_j is not None:
            t.energy_j = (t.energy_j or 0.0) + e.energy_j
        detail: dict[str, Any] = {
            "turn": e.turn,
            "engine": e.engine,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "token_method": method,
            "ttft_ms": e.timings.ttft_ms,
            "tool_calls": e.tool_calls,
            "energy_j": e.energy_j,
        }
        if e.failover:
            detail["failover"] = e.failover
        if e.prompt_parts:
            detail["prompt_parts"] = e.prompt_parts
        self._step("model", e.model, detail, duration_ms=round(e.timings.latency_ms, 3), ok=True)

    def _conclude(self, final: Final | None) -> Trace:
        t = self.trace
        if final is None:
            t.outcome, t.latency_ms = "interrupted", self._offset()
        else:
            t.outcome, t.latency_ms, t.turns = final.stop_reason, final.latency_ms, final.turns
            if final.stop_reason == "answer" and self._repaired:
                t.outcome = "leaked"  # the model's answer copied instructions or made data up
            elif final.stop_reason == "answer" and self._unrun:
                t.outcome = "answer_after_failure"  # a refused or failed call was not made good
            t.answer = self._mask(final.text[:2000])
            self._step("final", final.stop_reason, {"text": final.text[:200]})
        # Only a plain answer is a success: a run answered by a fallback did not succeed for
        # the model the router chose, and an answer after a refused call or one Lar had to
        # repair is nothing to learn from (``lar learn``, the learned router).
        t.success = t.outcome == "answer" and not self._failover
        total = t.prompt_tokens + t.completion_tokens
        t.reward = reward(
            latency_s=(t.latency_ms or 0.0) / 1000,
            cost_usd=t.cost_usd,
            completion_tokens=t.completion_tokens,
            total_tokens=total,
            max_latency_s=self.max_latency_s,
            max_cost_usd=self.max_cost_usd,
        )
        return t
