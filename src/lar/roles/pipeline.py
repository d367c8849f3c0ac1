"""Running one pipeline step (D6): timeout, retries, circuit breaker, fallback, verification.

A step's tool is called with its resolved input on a worker thread and given ``timeout_ms``; its
output must be a mapping that passes the tool's and the role's output schema, the step's
``verify`` rules and its external ``check`` (another tool looks at the same thing
independently, and a rule compares the two). A failed attempt is retried up to
``max_retries`` times; every failure counts towards the step's circuit breaker, which opens at
``failure_threshold`` and lets one trial through after ``reset_timeout_ms``. When the step
cannot succeed (failed attempts, or an open breaker), its ``fallback`` decides: ``tool`` runs
another tool on the same input and marks the result degraded; ``stop`` (or no fallback) ends the
run with what failed — nothing is invented in its place.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema

from lar.roles.contracts import ToolImpl
from lar.roles.expr import evaluate
from lar.roles.spec import Step
from lar.roles.store import Breakers

__all__ = ["StepOutcome", "StepFailure", "call_tool", "run_step"]


class StepFailure(Exception):
    pass


@dataclass
class StepOutcome:
    step: str
    tool: str
    component: str
    status: Literal["ok", "degraded", "failed"]
    output: dict[str, Any] | None
    attempts: int
    execution_time_ms: float
    confidence_score: float | None
    verified: list[str] = field(default_factory=list)
    error: str = ""
    degraded_reason: str = ""

    def envelope(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "tool": self.tool,
            "component": self.component,
            "status": self.status,
            "attempts": self.attempts,
            "execution_time_ms": round(self.execution_time_ms, 3),
            "confidence_score": self.confidence_score,
            "verified": self.verified,
            "error": self.error,
            "degraded_reason": self.degraded_reason,
        }


def call_tool(impl: ToolImpl, inputs: dict[str, Any], timeout_ms: int) -> dict[str, Any]:
    """The tool's output, or StepFailure (raised, timed out, not a mapping). A call that runs
    past its timeout is abandoned on its daemon thread; its late result is dropped."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = impl.fn(dict(inputs))
        except BaseException as exc:  # reported as the step's failure, never lost
            box["exc"] = exc

    worker = threading.Thread(target=target, name=f"role-step-{impl.name}", daemon=True)
    worker.start()
    worker.join(timeout_ms / 1000)
    if worker.is_alive():
        raise StepFailure(f"{impl.name} timed out after {timeout_ms} ms")
    if "exc" in box:
        exc = box["exc"]
        raise StepFailure(f"{impl.name} raised {type(exc).__name__}: {exc}")
    out = box.get("out")
    if not isinstance(out, Mapping):
        raise StepFailure(f"{impl.name} returned {type(out).__name__}, not a mapping")
    return dict(out)


def _check(
    step: Step,
    impl: ToolImpl,
    out: dict[str, Any],
    role_schema: Mapping[str, Any],
    facts: Mapping[str, Any],
) -> list[str]:
    verified = []
    for label, schema in (
        ("tool's output schema", impl.output_schema),
        ("role's contract", role_schema),
    ):
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(out), key=str)
        if errors:
            where = ".".join(str(p) for p in errors[0].path) or "(output)"
            raise StepFailure(
                f"{impl.name}: output fails the {label} at {where}: {errors[0].message}"
            )
        verified.append(label)
    scope = {**facts, step.name: out}
    for rule in step.verify:
        if not evaluate(rule, scope):
            raise StepFailure(f"{impl.name}: output fails the rule {rule!r}")
        verified.append(f"rule {rule}")
    return verified


External = Callable[[dict[str, Any]], str]
"""A step's external check: given its output, the verification it passed, or StepFailure."""


def _attempt(
    step: Step,
    impl: ToolImpl,
    inputs: dict[str, Any],
    role_schema: Mapping[str, Any],
    facts: Mapping[str, Any],
    external: External | None,
) -> tuple[dict[str, Any], list[str], float]:
    started = time.perf_counter()
    out = call_tool(impl, inputs, step.timeout_ms)
    verified = _check(step, impl, out, role_schema, facts)
    if external is not None:
        verified.append(external(out))
    elapsed = (time.perf_counter() - started) * 1000
    return out, verified, elapsed


def run_step(
    step: Step,
    impl: ToolImpl,
    inputs: dict[str, Any],
    *,
    role_schemas: Mapping[str, Mapping[str, Any]],
    facts: Mapping[str, Any],
    breakers: Breakers,
    fallback_impl: ToolImpl | None = None,
    unavailable: str = "",
    external: External | None = None,
) -> StepOutcome:
    """Run ``step`` (see the module doc). ``unavailable``: why the tool's capability cannot be
    used now; ``fallback_impl`` then runs (degraded) without trying the tool."""
    threshold = step.circuit_breaker.failure_threshold if step.circuit_breaker else 5
    reset_ms = step.circuit_breaker.reset_timeout_ms if step.circuit_breaker else 60_000
    errors: list[str] = []
    attempts = 0
    elapsed_total = 0.0
    if unavailable:
        errors.append(unavailable)
    else:
        state, failures = breakers.state(step.name, reset_ms)
        if state == "open":
            errors.append(f"circuit open after {failures} failures (reset in ≤ {reset_ms} ms)")
        else:
            tries = 1 if state == "half_open" else 1 + step.max_retries
            for _ in range(tries):
                attempts += 1
                started = time.perf_counter()
                try:
                    out, verified, elapsed = _attempt(
                        step, impl, inputs, role_schemas.get(impl.name, {}), facts, external
                    )
                except StepFailure as exc:
                    elapsed_total += (time.perf_counter() - started) * 1000
                    errors.append(str(exc))
                    breakers.record(step.name, False, threshold)
                    continue
                breakers.record(step.name, True, threshold)
                return StepOutcome(
                    step.name,
                    impl.name,
                    impl.component,
                    "ok",
                    out,
                    attempts,
                    elapsed_total + elapsed,
                    _confidence(out, impl),
                    verified,
                )
    reason = "; ".join(errors)
    if fallback_impl is not None:
        started = time.perf_counter()
        try:
            out, verified, elapsed = _attempt(
                step,
                fallback_impl,
                inputs,
                role_schemas.get(fallback_impl.name, {}),
                facts,
                external,
            )
        except StepFailure as exc:
            return StepOutcome(
                step.name,
                fallback_impl.name,
                fallback_impl.component,
                "failed",
                None,
                attempts + 1,
                elapsed_total + (time.perf_counter() - started) * 1000,
                None,
                error=f"{reason}; fallback failed too: {exc}",
            )
        return StepOutcome(
            step.name,
            fallback_impl.name,
            fallback_impl.component,
            "degraded",
            out,
            attempts + 1,
            elapsed_total + elapsed,
            _confidence(out, fallback_impl),
            verified,
            error=reason,
            degraded_reason=f"{impl.name} could not be used ({reason}); "
            f"{fallback_impl.name} ran instead",
        )
    return StepOutcome(
        step.name,
        impl.name,
        impl.component,
        "failed",
        None,
        attempts,
        elapsed_total,
        None,
        error=reason,
    )


def _confidence(out: Mapping[str, Any], impl: ToolImpl) -> float | None:
    value = out.get("confidence_score")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return 1.0 if impl.determinism == "deterministic" else None
