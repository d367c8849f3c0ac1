"""``lar role diff``: what an upgrade of a role changes, before it is applied (D1).

States, transitions, pipelines and their steps, tools and their contracts (fields added, removed
or retyped, determinism), capabilities, intents and memory retention — one line each, ``+`` for
what the new file adds, ``-`` for what it removes, ``~`` for what it changes.
"""

from __future__ import annotations

from typing import Any

from lar.roles.contracts import ContractError, expand
from lar.roles.spec import Role

__all__ = ["diff_roles"]


def _fields(schema: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    required = set(schema.get("required") or [])
    for name, sub in (schema.get("properties") or {}).items():
        kind = str(sub.get("type", "any")) + ("" if name in required else ", optional")
        if "enum" in sub:
            kind += " in " + "|".join(map(str, sub["enum"]))
        out[prefix + name] = kind
        if sub.get("type") == "object":
            out.update(_fields(sub, f"{prefix}{name}."))
        items = sub.get("items")
        if sub.get("type") == "array" and isinstance(items, dict) and items.get("type") == "object":
            out.update(_fields(items, f"{prefix}{name}[]."))
    return out


def _schema_fields(spec: dict[str, Any]) -> dict[str, str]:
    try:
        return _fields(expand(spec))
    except ContractError:
        return {"(unreadable schema)": repr(spec)}


def _transitions(role: Role) -> set[str]:
    return {
        f"{name} -> {t.to}" + (f" when {t.when}" if t.when else "")
        for name, state in role.spec.states.items()
        for t in state.next
    }


def _keyed(kind: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines = [f"- {kind} {k}" for k in old if k not in new]
    lines += [f"+ {kind} {k}" for k in new if k not in old]
    return lines


def _header(a: Any, b: Any) -> list[str]:
    lines = []
    for key in ("name", "version", "memory_retention_days", "intent_threshold", "start"):
        va, vb = getattr(a, key), getattr(b, key)
        if va != vb:
            label = "memory retention (days)" if key == "memory_retention_days" else key
            lines.append(f"~ {label}: {va} -> {vb}")
    if a.role.strip() != b.role.strip():
        lines.append("~ role description changed")
    return lines


def _states(old: Role, new: Role) -> list[str]:
    a, b = old.spec, new.spec
    lines = _keyed("state", a.states, b.states)
    for name in a.states.keys() & b.states.keys():
        sa, sb = a.states[name], b.states[name]
        if sa.run != sb.run:
            lines.append(f"~ state {name}: runs {sa.run or 'nothing'} -> {sb.run or 'nothing'}")
        if sa.final != sb.final:
            lines.append(f"~ state {name}: final {sa.final} -> {sb.final}")
    ta, tb = _transitions(old), _transitions(new)
    lines += [f"- transition {t}" for t in sorted(ta - tb)]
    lines += [f"+ transition {t}" for t in sorted(tb - ta)]
    return lines


def _pipelines(a: Any, b: Any) -> list[str]:
    lines = _keyed("pipeline", a.pipelines, b.pipelines)
    for pname in a.pipelines.keys() & b.pipelines.keys():
        steps_a = {s.name: s for s in a.pipelines[pname].steps}
        steps_b = {s.name: s for s in b.pipelines[pname].steps}
        lines += _keyed(f"step {pname}.", steps_a, steps_b)
        if [s for s in steps_a if s in steps_b] != [s for s in steps_b if s in steps_a]:
            lines.append(f"~ pipeline {pname}: step order {list(steps_a)} -> {list(steps_b)}")
        for sname in steps_a.keys() & steps_b.keys():
            da, db = steps_a[sname].model_dump(), steps_b[sname].model_dump()
            for key in sorted(set(da) | set(db)):
                if da.get(key) != db.get(key):
                    change = f"{da.get(key)!r} -> {db.get(key)!r}"
                    lines.append(f"~ step {pname}.{sname}: {key} {change}")
    return lines


def _contracts(a: Any, b: Any) -> list[str]:
    lines = _keyed("tool", a.tools, b.tools)
    for tname in sorted(a.tools.keys() & b.tools.keys()):
        ca, cb = a.tools[tname], b.tools[tname]
        if ca.determinism != cb.determinism:
            lines.append(f"~ contract {tname}: determinism {ca.determinism} -> {cb.determinism}")
        for side in ("input", "output"):
            fa = _schema_fields(getattr(ca, side))
            fb = _schema_fields(getattr(cb, side))
            for f in sorted(fa.keys() - fb.keys()):
                lines.append(f"~ contract {tname}: {side} field {f} removed ({fa[f]})")
            for f in sorted(fb.keys() - fa.keys()):
                lines.append(f"~ contract {tname}: {side} field {f} added ({fb[f]})")
            for f in sorted(fa.keys() & fb.keys()):
                if fa[f] != fb[f]:
                    lines.append(f"~ contract {tname}: {side} field {f}: {fa[f]} -> {fb[f]}")
    return lines


def _rest(a: Any, b: Any) -> list[str]:
    caps_a = {c.name: c.model_dump() for c in a.capabilities}
    caps_b = {c.name: c.model_dump() for c in b.capabilities}
    lines = _keyed("capability", caps_a, caps_b)
    for name in sorted(caps_a.keys() & caps_b.keys()):
        if caps_a[name] != caps_b[name]:
            changed = [k for k in caps_a[name] if caps_a[name][k] != caps_b[name][k]]
            lines.append(f"~ capability {name}: {', '.join(changed)} changed")
    lines += _keyed("intent", a.intents, b.intents)
    for name in sorted(a.intents.keys() & b.intents.keys()):
        ia, ib = a.intents[name], b.intents[name]
        if ia.state != ib.state:
            lines.append(f"~ intent {name}: enters {ia.state} -> {ib.state}")
        if (ia.keywords, ia.examples) != (ib.keywords, ib.examples):
            lines.append(f"~ intent {name}: keywords or examples changed")
    for name in sorted(a.data.keys() | b.data.keys()):
        if a.data.get(name) != b.data.get(name):
            lines.append(f"~ data {name}: {a.data.get(name)} -> {b.data.get(name)}")
    if a.report != b.report:
        lines.append("~ report changed")
    return lines


def diff_roles(old: Role, new: Role) -> list[str]:
    """The changes from ``old`` to ``new`` (empty: same behaviour)."""
    a, b = old.spec, new.spec
    return [*_header(a, b), *_states(old, new), *_pipelines(a, b), *_contracts(a, b), *_rest(a, b)]
