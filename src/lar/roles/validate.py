"""Load-time checks of a role's state machine (D3, D4, D5), each reported with file and line.

Unknown states, pipelines and tools; states no entry can reach; dead ends (a state that is not
final and cannot reach one); guards, inputs and report fields that read a field no tool's contract
returns (with the names it does return); nondeterministic tools in a pipeline and seeded ones
without a seed; fallbacks whose output lacks what the machine reads; and, when implementations are
given, every way a tool does not meet its contract.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from lar.roles.contracts import ContractError, ToolImpl, check_registration, expand, field_schema
from lar.roles.expr import ExprError, references
from lar.roles.spec import Problem, Role, Step

__all__ = ["validate", "entry_states", "input_refs", "schemas"]

Where = tuple[Any, ...]
_SPECIAL = {"run": ("home",), "intent": ("name", "confidence")}


def entry_states(role: Role) -> list[str]:
    entries = [i.state for i in role.spec.intents.values()]
    if role.spec.start:
        entries.insert(0, role.spec.start)
    return list(dict.fromkeys(entries))


def input_refs(value: Any) -> Iterator[str]:
    """The ``$references`` inside a step's input mapping."""
    if isinstance(value, str) and value.startswith("$"):
        yield value[1:]
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from input_refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from input_refs(v)


def schemas(role: Role) -> tuple[dict[str, tuple[dict[str, Any], dict[str, Any]]], list[Problem]]:
    """Each tool's expanded (input, output) schema, and the contracts that could not be read."""
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    problems: list[Problem] = []
    for name, contract in role.spec.tools.items():
        try:
            out[name] = (
                expand(contract.input, f"tools.{name}.input"),
                expand(contract.output, f"tools.{name}.output"),
            )
        except ContractError as exc:
            problems.append(role.problem(str(exc), "tools", name))
    return out, problems


def _closest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fields(schema: Mapping[str, Any]) -> list[str]:
    return sorted((schema.get("properties") or {}).keys())


class _Checker:
    def __init__(self, role: Role) -> None:
        self.role = role
        self.spec = role.spec
        self.contracts, self.problems = schemas(role)
        self.steps = role.steps()

    def add(self, message: str, *where: Any) -> None:
        self.problems.append(self.role.problem(message, *where))

    # -- references ----------------------------------------------------------------------

    def ref(self, ref: str, where: Where, what: str) -> None:
        head, _, rest = ref.partition(".")
        if head == "request":
            known = ["text", *self.spec.inputs]
            if rest not in known:
                self.add(
                    f"{what} reads request.{rest}; the role's inputs: {', '.join(known)}", *where
                )
        elif head == "data":
            if rest not in self.spec.data:
                files = ", ".join(self.spec.data) or "none"
                self.add(f"{what} reads data.{rest}; data files: {files}", *where)
        elif head in _SPECIAL:
            if rest not in _SPECIAL[head]:
                only = ", ".join(f"{head}.{f}" for f in _SPECIAL[head])
                self.add(f"{what} reads {head}.{rest}; there is only {only}", *where)
        elif head not in self.steps:
            hint = _closest(head, [*self.steps, "request", "data"])
            self.add(f"{what} reads {ref!r}, but no step is named {head!r}{hint}", *where)
        else:
            tool = self.steps[head][2].tool
            if tool in self.contracts and rest:
                output = self.contracts[tool][1]
                if field_schema(output, rest.split(".")) is None:
                    fields = _fields(output)
                    self.add(
                        f"{what} reads {ref!r}, but tool {tool!r} returns no field {rest!r} "
                        f"(its contract returns: {', '.join(fields) or 'nothing'})"
                        + _closest(rest.split(".")[0], fields),
                        *where,
                    )

    def expression(self, text: str, where: Where, what: str) -> list[str]:
        try:
            refs = references(text)
        except ExprError as exc:
            self.add(f"{what}: {exc}", *where)
            return []
        for r in refs:
            self.ref(r, where, what)
        return refs

    # -- states ----------------------------------------------------------------------------

    def states(self) -> None:
        spec = self.spec
        names = list(spec.states)
        for name, state in spec.states.items():
            if state.run is not None and state.run not in spec.pipelines:
                self.add(
                    f"state {name!r} runs pipeline {state.run!r}, which is not defined"
                    + _closest(state.run, list(spec.pipelines)),
                    "states",
                    name,
                    "run",
                )
            for i, tr in enumerate(state.next):
                if tr.to not in spec.states:
                    self.add(
                        f"state {name!r} goes to unknown state {tr.to!r}" + _closest(tr.to, names),
                        "states",
                        name,
                        "next",
                        i,
                        "to",
                    )
                if tr.when:
                    self.expression(tr.when, ("states", name, "next", i, "when"), "a guard")
            if state.final and state.next:
                self.add(f"state {name!r} is final but has transitions", "states", name, "next")
        for iname, intent in spec.intents.items():
            if intent.state not in spec.states:
                self.add(
                    f"intent {iname!r} enters unknown state {intent.state!r}"
                    + _closest(intent.state, names),
                    "intents",
                    iname,
                    "state",
                )
        if spec.start is not None and spec.start not in spec.states:
            self.add(f"start state {spec.start!r} is not defined", "start")

    def graph(self) -> None:
        spec = self.spec
        entries = [e for e in entry_states(self.role) if e in spec.states]
        if not entries:
            self.add("no entry state: give `start:` or intents", "states")
            return
        edges = {n: [t.to for t in s.next if t.to in spec.states] for n, s in spec.states.items()}
        seen: set[str] = set()
        todo = list(entries)
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += edges[n]
        for name in spec.states:
            if name not in seen:
                self.add(
                    f"state {name!r} is unreachable: no entry state or transition leads to it",
                    "states",
                    name,
                )
        finishing = {n for n, s in spec.states.items() if s.final}
        grew = True
        while grew:
            before = len(finishing)
            finishing |= {n for n in spec.states if any(t in finishing for t in edges[n])}
            grew = len(finishing) > before
        for name, state in spec.states.items():
            if state.final:
                continue
            if not state.next:
                self.add(
                    f"state {name!r} is a dead end: it is not final and has no transition out",
                    "states",
                    name,
                )
            elif name not in finishing:
                self.add(
                    f"state {name!r} is a dead end: no final state can be reached from it",
                    "states",
                    name,
                )

    # -- pipelines -------------------------------------------------------------------------

    def read_by_guards(self) -> dict[str, set[str]]:
        read: dict[str, set[str]] = {}
        for state in self.spec.states.values():
            for tr in state.next:
                if tr.when:
                    try:
                        for ref in references(tr.when):
                            head, _, rest = ref.partition(".")
                            read.setdefault(head, set()).add(rest)
                    except ExprError:
                        pass
        return read

    def step(self, step: Step, where: Where, read: dict[str, set[str]]) -> None:
        spec = self.spec
        if step.tool not in spec.tools:
            self.add(
                f"step {step.name!r} uses tool {step.tool!r}, which has no contract under "
                "tools:" + _closest(step.tool, list(spec.tools)),
                *where,
                "tool",
            )
            return
        level = spec.tools[step.tool].determinism
        if level == "nondeterministic":
            self.add(
                f"step {step.name!r}: tool {step.tool!r} is nondeterministic, which a "
                "pipeline refuses (make it seeded with a fixed seed, or deterministic)",
                *where,
                "tool",
            )
        elif level == "seeded" and step.seed is None:
            self.add(
                f"step {step.name!r}: tool {step.tool!r} is seeded; give the step a fixed `seed:`",
                *where,
            )
        for ref in input_refs(step.input):
            self.ref(ref, (*where, "input"), f"step {step.name!r}'s input")
        if step.tool in self.contracts:
            tool_in = self.contracts[step.tool][0]
            props = tool_in.get("properties") or {}
            for key in step.input:
                if props and key not in props:
                    self.add(
                        f"step {step.name!r} passes {key!r}, which tool {step.tool!r}'s "
                        f"contract does not take (it takes: {', '.join(props)})",
                        *where,
                        "input",
                        key,
                    )
            for key in tool_in.get("required") or []:
                if key not in step.input:
                    self.add(
                        f"step {step.name!r} does not pass {key!r}, which tool "
                        f"{step.tool!r} requires",
                        *where,
                        "input",
                    )
        for rule in step.verify:
            self.expression(rule, (*where, "verify"), f"step {step.name!r}'s rule")
        if step.check is not None:
            self.external(step, where)
        self.fallbacks(step, where, read.get(step.name, set()))

    def external(self, step: Step, where: Where) -> None:
        check = step.check
        assert check is not None
        where = (*where, "check")
        if check.tool not in self.spec.tools:
            self.add(
                f"step {step.name!r}'s check uses tool {check.tool!r}, which has no "
                "contract under tools:" + _closest(check.tool, list(self.spec.tools)),
                *where,
                "tool",
            )
            return
        if self.spec.tools[check.tool].determinism != "deterministic":
            self.add(
                f"step {step.name!r}'s check tool {check.tool!r} must be deterministic",
                *where,
                "tool",
            )
        for ref in input_refs(check.input):
            self.ref(ref, (*where, "input"), f"step {step.name!r}'s check input")
        try:
            refs = references(check.rule)
        except ExprError as exc:
            self.add(f"check rule: {exc}", *where, "rule")
            return
        output = self.contracts.get(check.tool, ({}, {}))[1]
        for ref in refs:
            head, _, rest = ref.partition(".")
            if head != "check":
                self.ref(ref, (*where, "rule"), f"step {step.name!r}'s check rule")
            elif rest and field_schema(output, rest.split(".")) is None:
                fields = ", ".join(_fields(output)) or "nothing"
                self.add(
                    f"step {step.name!r}'s check rule reads {ref!r}, but tool "
                    f"{check.tool!r} returns no field {rest!r} (its contract returns: "
                    f"{fields})",
                    *where,
                    "rule",
                )

    def fallbacks(self, step: Step, where: Where, read: set[str]) -> None:
        spec = self.spec
        alternatives: list[tuple[str, Where]] = []
        if step.fallback and step.fallback.strategy == "tool":
            if not step.fallback.tool:
                self.add("fallback strategy `tool` needs `tool:`", *where, "fallback")
            else:
                alternatives.append((step.fallback.tool, (*where, "fallback", "tool")))
        for i, cap in enumerate(spec.capabilities):
            if step.tool in cap.degraded:
                alternatives.append((cap.degraded[step.tool], ("capabilities", i, "degraded")))
        for alt, alt_where in alternatives:
            if alt not in spec.tools:
                self.add(f"fallback tool {alt!r} has no contract under tools:", *alt_where)
                continue
            if spec.tools[alt].determinism == "nondeterministic":
                self.add(f"fallback tool {alt!r} is nondeterministic", *alt_where)
            if alt not in self.contracts:
                continue
            for rest in sorted(read):
                if rest and field_schema(self.contracts[alt][1], rest.split(".")) is None:
                    self.add(
                        f"fallback tool {alt!r} returns no {rest!r}, which a guard reads "
                        f"from step {step.name!r}",
                        *alt_where,
                    )

    def pipelines(self) -> None:
        read = self.read_by_guards()
        seen: dict[str, str] = {}
        for pname, pipeline in self.spec.pipelines.items():
            for i, step in enumerate(pipeline.steps):
                if step.name in seen:
                    self.add(
                        f"step name {step.name!r} is used twice (pipelines {seen[step.name]} "
                        f"and {pname}); guards could not tell them apart",
                        "pipelines",
                        pname,
                        "steps",
                        i,
                        "name",
                    )
                seen.setdefault(step.name, pname)
        for pname, pipeline in self.spec.pipelines.items():
            for i, step in enumerate(pipeline.steps):
                self.step(step, ("pipelines", pname, "steps", i), read)
        for ref in [*self.spec.report.fields, *self.spec.report.must_state]:
            self.ref(ref, ("report",), "the report")

    def registrations(self, impls: Mapping[str, ToolImpl]) -> None:
        for name, contract in self.spec.tools.items():
            if name not in self.contracts:
                continue
            impl = impls.get(name)
            if impl is None:
                self.add(
                    f"no capability provides tool {name!r}" + _closest(name, list(impls)),
                    "tools",
                    name,
                )
                continue
            for text in check_registration(name, *self.contracts[name], contract.determinism, impl):
                self.add(f"contract mismatch: {text}", "tools", name)


def validate(role: Role, impls: Mapping[str, ToolImpl] | None = None) -> list[Problem]:
    """Every defect of ``role``; empty when it can run. ``impls``: also check registrations."""
    checker = _Checker(role)
    checker.states()
    checker.graph()
    checker.pipelines()
    if impls is not None:
        checker.registrations(impls)
    return sorted(set(checker.problems), key=lambda p: (str(p.file), p.line, p.message))
