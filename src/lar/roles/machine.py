"""Running a role (D3, D6–D8, D10): intent → entry state → pipelines → guarded transitions →
final state → report.

Code decides every step: the intent parser picks the entry state, each state runs its pipeline
(``lar.roles.pipeline``), and the first transition whose guard holds over the step outputs names
the next state. The model, when there is one, only phrases the final report (``lar.roles.report``).
Every step is recorded in the run's evidence chain (``lar.traces.evidence``), and the structured
result — which holds no time and no run id — is hashed, so the same inputs give the same result
and the same evidence hashes on every run.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lar.engines import Engine
from lar.errors import LarError
from lar.roles.capability import Capability, CapabilityError, open_package, run_probe
from lar.roles.contracts import ToolImpl
from lar.roles.expr import MISSING, evaluate, lookup
from lar.roles.intent import IntentMatch, IntentParser
from lar.roles.pipeline import External, StepFailure, StepOutcome, call_tool, run_step
from lar.roles.report import Phrased, report_for, run_sync
from lar.roles.spec import Problem, Role, RoleFileError, Step
from lar.roles.store import Breakers, RoleStore
from lar.roles.validate import input_refs, schemas, validate
from lar.traces import EvidenceStore
from lar.traces.evidence import digest

__all__ = ["RoleRunner", "RoleRun", "RoleInputError", "CapabilityHealth", "MAX_TRANSITIONS"]

MAX_TRANSITIONS = 64


@dataclass
class CapabilityHealth:
    name: str
    version: str
    source: str
    state: str
    """AVAILABLE or UNAVAILABLE (its probe failed: ``reason``)."""
    reason: str = ""
    degraded: dict[str, str] = field(default_factory=dict)


@dataclass
class RoleRun:
    run_id: str
    role: str
    version: str
    intent: IntentMatch | None
    path: list[str]
    final_state: str
    outcome: str
    """completed, degraded, stopped (a step failed, no fallback), stuck (no guard held) or
    unclear (no entry state: see ``intent.choices``)."""
    result: dict[str, Any]
    result_hash: str
    steps: list[StepOutcome]
    report: str = ""
    report_source: str = ""
    notes: list[str] = field(default_factory=list)


class RoleInputError(LarError):
    """A run asked for something the role does not take (an input, an intent)."""


Notify = Callable[[str, str, str], None]
"""(channel, title, body): a fallback's ``notify`` entries."""


class RoleRunner:
    def __init__(
        self,
        role: Role,
        *,
        home: Path,
        db_path: Path,
        trusted: Mapping[str, Any] | None = None,
        engine: Engine | None = None,
        notify: Notify | None = None,
        capabilities: Mapping[str, Capability] | None = None,
    ) -> None:
        """``capabilities``: more capabilities a role may name with ``builtin:`` (Python code
        that registers its own tools), beside Lar's."""
        from lar.roles.library import BUILTIN_CAPABILITIES
        from lar.roles.library.model import model_capability

        known = {
            **BUILTIN_CAPABILITIES,
            "model": model_capability(lambda: self.engine),
            **(capabilities or {}),
        }

        self.role = role
        self.home = home
        self.engine = engine
        self.notify = notify
        self.capabilities: dict[str, Capability] = {}
        self.impls: dict[str, ToolImpl] = {}
        self.degraded: dict[str, str] = {}
        self._cap_of: dict[str, str] = {}
        problems: list[Problem] = []
        for i, ref in enumerate(role.spec.capabilities):
            try:
                if (ref.builtin is None) == (ref.package is None):
                    raise CapabilityError("give exactly one of `builtin:` or `package:`")
                if ref.builtin is not None:
                    if ref.builtin not in known:
                        raise CapabilityError(
                            f"no built-in capability {ref.builtin!r} (built in: {', '.join(known)})"
                        )
                    cap = known[ref.builtin]
                else:
                    cap = open_package(
                        role.folder / str(ref.package),
                        home=home,
                        trusted=trusted or {},
                        grant=ref.grant,
                    )
            except CapabilityError as exc:
                problems.append(role.problem(f"capability {ref.name!r}: {exc}", "capabilities", i))
                continue
            self.capabilities[ref.name] = cap
            for tool, impl in cap.tools.items():
                if tool in self.impls:
                    problems.append(
                        role.problem(
                            f"tool {tool!r} comes from two capabilities "
                            f"({self._cap_of[tool]} and {ref.name})",
                            "capabilities",
                            i,
                        )
                    )
                self.impls[tool] = impl
                self._cap_of[tool] = ref.name
            self.degraded.update(ref.degraded)
        problems += validate(role, self.impls)
        if problems:
            raise RoleFileError(problems)
        self.contracts, _ = schemas(role)
        self.health: dict[str, str | None] = {}
        self.store = RoleStore(db_path)
        self.evidence = EvidenceStore(db_path)
        self.breakers = Breakers(self.store, role.name)
        self.parser = IntentParser.for_role(role)

    # -- health ----------------------------------------------------------------------------

    def probe(self, name: str) -> str | None:
        """Load capability ``name`` if needed and run its probe once per runner."""
        if name not in self.health:
            self.health[name] = run_probe(self.capabilities[name])
        return self.health[name]

    def status(self) -> list[CapabilityHealth]:
        """Each capability of the role, probed (loaded first when it is a package)."""
        out = []
        for ref in self.role.spec.capabilities:
            cap = self.capabilities[ref.name]
            reason = self.probe(ref.name)
            out.append(
                CapabilityHealth(
                    ref.name,
                    cap.version,
                    cap.source,
                    "UNAVAILABLE" if reason else "AVAILABLE",
                    reason or "",
                    dict(ref.degraded),
                )
            )
        return out

    # -- running ---------------------------------------------------------------------------

    def _resolve(self, value: Any, facts: Mapping[str, Any]) -> Any:
        if isinstance(value, str) and value.startswith("$"):
            found = lookup(facts, value[1:])
            if found is MISSING:
                raise LookupError(value)
            return found
        if isinstance(value, Mapping):
            return {k: self._resolve(v, facts) for k, v in value.items()}
        if isinstance(value, list):
            return [self._resolve(v, facts) for v in value]
        return value

    def _home(self) -> Path:
        return self.home / "roles" / self.role.name

    def _expire(self) -> None:
        old = self.store.expired(self.role.name, self.role.spec.memory_retention_days)
        if old:
            self.evidence.delete_runs(old)
            self.store.delete(old)

    def run(
        self,
        text: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        intent: str | None = None,
    ) -> RoleRun:
        """Run the role on a request (see the module doc). ``intent`` skips the parser."""
        spec = self.role.spec
        unknown = sorted(set(inputs or {}) - set(spec.inputs))
        if unknown:
            raise RoleInputError(
                f"unknown input(s) {', '.join(unknown)}; this role takes: "
                f"{', '.join(spec.inputs) or 'none'}"
            )
        self._expire()
        match = self._entry(text, intent)
        run_id = uuid.uuid4().hex[:16]
        self.store.start(run_id, spec.name, spec.version)
        if match is not None:
            self.evidence.append(
                run_id,
                state="",
                step="intent",
                component="lar.roles.intent",
                input_value={"text": text},
                output_value={
                    "intent": match.intent,
                    "state": match.state,
                    "confidence": match.confidence,
                    "choices": match.choices,
                },
                verified=f"threshold {spec.intent_threshold}",
                outcome="entered" if match.state else "unclear",
            )
        if match is not None and match.state is None:
            unclear: dict[str, Any] = {
                "role": spec.name,
                "version": spec.version,
                "outcome": "unclear",
                "choices": [c for c, _ in match.choices],
            }
            return self._finish(run_id, match, [], "", "unclear", unclear, [], {})
        entry = match.state if match is not None else spec.start
        assert entry is not None  # validate() guarantees an entry state
        facts: dict[str, dict[str, Any]] = {
            "request": {"text": text, **dict(inputs or {})},
            "data": {k: str(self.role.data_path(k)) for k in spec.data},
            "intent": {
                "name": match.intent if match else None,
                "confidence": match.confidence if match else 1.0,
            },
            "run": {"home": str(self._home())},
        }
        path: list[str] = []
        steps: list[StepOutcome] = []
        outcome = "completed"
        state_name = entry
        notes: list[str] = []
        for _ in range(MAX_TRANSITIONS):
            path.append(state_name)
            state = spec.states[state_name]
            if state.final:
                break
            if state.run:
                stopped = self._pipeline(run_id, state_name, state.run, facts, steps, notes)
                if stopped:
                    outcome = "stopped"
                    break
            nxt = next(
                (t.to for t in state.next if t.when is None or evaluate(t.when, facts)), None
            )
            if nxt is None:
                outcome = "stuck"
                notes.append(f"no transition out of {state_name} held")
                break
            state_name = nxt
        else:
            outcome = "stuck"
            notes.append(f"more than {MAX_TRANSITIONS} transitions")
        if outcome == "completed" and any(s.status == "degraded" for s in steps):
            outcome = "degraded"
        fields = {
            ref: value
            for ref in spec.report.fields
            if (value := lookup(facts, ref)) is not MISSING and value not in ("", None)
        }
        result: dict[str, Any] = {
            "role": spec.name,
            "version": spec.version,
            "intent": match.intent if match else None,
            "path": path,
            "final_state": path[-1],
            "outcome": outcome,
            "fields": fields,
            "degraded": [s.degraded_reason for s in steps if s.degraded_reason],
            "failed": [f"{s.step}: {s.error}" for s in steps if s.status == "failed"],
        }
        return self._finish(run_id, match, path, path[-1], outcome, result, steps, fields, notes)

    def _entry(self, text: str, intent: str | None) -> IntentMatch | None:
        spec = self.role.spec
        if intent is not None:
            if intent not in spec.intents:
                raise RoleInputError(f"no intent {intent!r}; intents: {', '.join(spec.intents)}")
            return IntentMatch(intent, spec.intents[intent].state, 1.0, [(intent, 1.0)])
        return self.parser.parse(text) if self.parser is not None else None

    def _pipeline(
        self,
        run_id: str,
        state: str,
        pipeline: str,
        facts: dict[str, Any],
        steps: list[StepOutcome],
        notes: list[str],
    ) -> bool:
        """Run a state's pipeline; True when a step failed and the run stops."""
        for step in self.role.spec.pipelines[pipeline].steps:
            try:
                inputs = self._resolve(step.input, facts)
            except LookupError as exc:
                missing = ", ".join(
                    r for r in input_refs(step.input) if lookup(facts, r) is MISSING
                )
                notes.append(f"step {step.name}: input {exc} is missing ({missing})")
                self.evidence.append(
                    run_id,
                    state=state,
                    step=step.name,
                    component="lar.roles.machine",
                    input_value=step.input,
                    output_value={"missing": missing},
                    verified="inputs",
                    outcome="failed",
                )
                return True
            if step.seed is not None:
                inputs = (
                    {**inputs, "seed": step.seed}
                    if "seed" in (self.impls[step.tool].input_schema.get("properties") or {})
                    else inputs
                )
            impl = self.impls[step.tool]
            cap = self._cap_of[step.tool]
            unavailable = ""
            reason = self.probe(cap)
            fallback_impl = None
            if reason:
                unavailable = f"capability {cap} UNAVAILABLE ({reason})"
                alt = self.degraded.get(step.tool)
                if alt:
                    fallback_impl = self.impls[alt]
            if fallback_impl is None and step.fallback and step.fallback.strategy == "tool":
                fallback_impl = self.impls[step.fallback.tool or ""]
                if self._cap_of.get(fallback_impl.name) != cap and self.probe(
                    self._cap_of[fallback_impl.name]
                ):
                    fallback_impl = None
            out = run_step(
                step,
                impl,
                inputs,
                role_schemas={t: s[1] for t, s in self.contracts.items()},
                facts=facts,
                breakers=self.breakers,
                fallback_impl=fallback_impl,
                unavailable=unavailable,
                external=self._external(step, facts),
            )
            steps.append(out)
            self.evidence.append(
                run_id,
                state=state,
                step=step.name,
                component=out.component,
                input_value=inputs,
                output_value=out.output if out.output is not None else {"error": out.error},
                verified=", ".join(out.verified) or "none",
                outcome=out.status
                if out.attempts <= 1
                else f"{out.status} after {out.attempts} attempts",
            )
            if out.status != "ok" and step.fallback and step.fallback.notify and self.notify:
                for channel in step.fallback.notify:
                    self.notify(
                        channel,
                        f"{self.role.name}: step {step.name} {out.status}",
                        out.degraded_reason or out.error,
                    )
            if out.output is None:
                return True
            facts[step.name] = out.output
        return False

    def _external(self, step: Step, facts: Mapping[str, Any]) -> External | None:
        """The step's external check as a function of its output (see ``Check``)."""
        check = step.check
        if check is None:
            return None
        impl = self.impls[check.tool]

        def run(out: dict[str, Any]) -> str:
            scope = {**facts, step.name: out}
            try:
                inputs = self._resolve(check.input, scope)
            except LookupError as exc:
                raise StepFailure(f"external check {check.tool}: input {exc} is missing") from None
            got = call_tool(impl, inputs, step.timeout_ms)
            if not evaluate(check.rule, {**scope, "check": got}):
                raise StepFailure(f"external check {check.tool} failed: {check.rule}")
            return f"external check {check.tool}: {check.rule}"

        return run

    def _finish(
        self,
        run_id: str,
        match: IntentMatch | None,
        path: list[str],
        final: str,
        outcome: str,
        result: dict[str, Any],
        steps: list[StepOutcome],
        fields: dict[str, Any],
        notes: list[str] | None = None,
    ) -> RoleRun:
        result_hash = digest(result)
        self.evidence.append(
            run_id,
            state=final,
            step="result",
            component="lar.roles.machine",
            input_value={"path": path},
            output_value=result,
            verified="result of the state machine",
            outcome=outcome,
        )
        notes = list(notes or [])
        report = self._report(result, fields, notes)
        self.store.finish(
            run_id,
            outcome=outcome,
            final_state=final,
            result=result,
            result_hash=result_hash,
            report=report.text,
            report_source=report.source,
        )
        return RoleRun(
            run_id,
            self.role.name,
            self.role.spec.version,
            match,
            path,
            final,
            outcome,
            result,
            result_hash,
            steps,
            report.text,
            report.source,
            notes,
        )

    def _report(self, result: dict[str, Any], fields: dict[str, Any], notes: list[str]) -> Phrased:
        step_schemas = {
            name: self.contracts[entry[2].tool][1]
            for name, entry in self.role.steps().items()
            if entry[2].tool in self.contracts
        }
        return run_sync(
            report_for(self.role.spec, result, fields, notes, self.engine, step_schemas)
        )
