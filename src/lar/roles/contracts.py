"""Tool contracts (D4, D5): what a role expects of a tool, and the check made when a tool is
registered for it.

A role declares, per tool, the input and output it expects as JSON Schemas (or the short form
``field: type``, ``field: type?`` for an optional field, a nested mapping for an object,
``[type]`` for an array, and a mapping with ``type:`` for a JSON Schema fragment such as
``{type: string, enum: [low, high]}``) and a determinism level. A tool implementation brings its
own schemas; registering it for the role compares the two and refuses any mismatch with both names
("returns 'page_count' where the role expects 'total_pages'").
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from lar.errors import LarError

__all__ = [
    "ContractError",
    "ToolImpl",
    "expand",
    "field_schema",
    "check_registration",
    "DETERMINISM_RANK",
]

DETERMINISM_RANK = {"deterministic": 0, "seeded": 1, "nondeterministic": 2}
_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null", "any"}


class ContractError(LarError):
    pass


def _is_schema(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") == "object" or "properties" in spec or "$schema" in spec


def _short(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        name = value.rstrip("?").strip()
        if name not in _TYPES:
            raise ContractError(
                f"{where}: unknown type {value!r} (one of {', '.join(sorted(_TYPES))})"
            )
        return {} if name == "any" else {"type": name}
    if isinstance(value, list) and len(value) == 1:
        return {"type": "array", "items": _short(value[0], where + "[]")}
    if isinstance(value, Mapping):
        if isinstance(value.get("type"), str) and value["type"] != "object":
            return dict(value)  # a JSON Schema fragment: {type: string, enum: [...]}
        return expand(value, where)
    raise ContractError(f"{where}: write a type name, a mapping of fields, or [type]")


def expand(spec: Mapping[str, Any], where: str = "schema") -> dict[str, Any]:
    """A JSON Schema from a contract's input or output (full schema or the short form)."""
    if not spec:
        return {"type": "object", "properties": {}}
    if _is_schema(spec):
        schema = dict(spec)
        schema.setdefault("type", "object")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ContractError(f"{where}: not a valid JSON Schema ({exc.message})") from None
        return schema
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, value in spec.items():
        properties[str(key)] = _short(value, f"{where}.{key}")
        if not (isinstance(value, str) and value.endswith("?")):
            required.append(str(key))
    return {"type": "object", "properties": properties, "required": required}


def field_schema(schema: Mapping[str, Any], path: list[str]) -> dict[str, Any] | None:
    """The schema of a dotted field inside an object schema, or None when it has no such field."""
    node: Mapping[str, Any] = schema
    for part in path:
        props = node.get("properties")
        if not isinstance(props, Mapping) or part not in props:
            return None
        node = props[part]
    return dict(node)


@dataclass
class ToolImpl:
    """A tool a role can use: a function from a dict of inputs to a dict of outputs, with its
    own JSON Schemas, its determinism level and where it comes from."""

    name: str
    fn: Callable[[dict[str, Any]], dict[str, Any]]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    determinism: str = "deterministic"
    version: str = "1"
    capability: str = "builtin"

    @property
    def component(self) -> str:
        return f"{self.capability}/{self.name}@{self.version}"


def _type(schema: Mapping[str, Any] | None) -> Any:
    return None if schema is None else schema.get("type")


def _compare_objects(
    tool: str, side: str, expected: Mapping[str, Any], actual: Mapping[str, Any], prefix: str
) -> list[str]:
    problems: list[str] = []
    exp_props: Mapping[str, Any] = expected.get("properties") or {}
    act_props: Mapping[str, Any] = actual.get("properties") or {}
    exp_req = set(expected.get("required") or [])
    act_req = set(actual.get("required") or [])
    extra = [p for p in act_props if p not in exp_props]
    for name, exp in exp_props.items():
        label = f"{prefix}{name}"
        if name not in act_props:
            if (
                side == "input"
                and actual.get("additionalProperties") is not False
                and not act_props
            ):
                continue
            same_type = [p for p in extra if _type(act_props[p]) == _type(exp)]
            guess = difflib.get_close_matches(name, extra, n=1, cutoff=0.3) or (
                same_type if len(same_type) == 1 else []
            )
            hint = f"; it has {guess[0]!r} instead" if guess else ""
            if side == "output":
                problems.append(
                    f"tool {tool!r} returns no {label!r}, which the role expects{hint}"
                    + (f" — renamed from {label!r} to {prefix}{guess[0]!r}?" if guess else "")
                )
            else:
                problems.append(
                    f"tool {tool!r} takes no input {label!r}, which the role passes{hint}"
                )
            continue
        got = act_props[name]
        if _type(exp) and _type(got) and _type(exp) != _type(got):
            problems.append(
                f"tool {tool!r}: {side} {label!r} is {_type(got)} but the role expects {_type(exp)}"
            )
        elif _type(exp) == "object" and _type(got) == "object":
            problems += _compare_objects(tool, side, exp, got, label + ".")
        elif _type(exp) == "array" and isinstance(exp.get("items"), Mapping):
            items = got.get("items")
            if isinstance(items, Mapping) and _type(exp["items"]) == "object":
                problems += _compare_objects(tool, side, exp["items"], items, label + "[].")
        if side == "output" and name in exp_req and name not in act_req:
            problems.append(f"tool {tool!r} may omit {side} {label!r}, which the role requires")
    if side == "input":
        for name in sorted(act_req - set(exp_props)):
            problems.append(
                f"tool {tool!r} requires input {prefix}{name!r}, which the role's contract lacks"
            )
    return problems


def check_registration(
    name: str,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any],
    determinism: str,
    impl: ToolImpl,
) -> list[str]:
    """Every way ``impl`` does not meet the role's contract for tool ``name`` (empty: it fits)."""
    problems: list[str] = []
    if DETERMINISM_RANK.get(impl.determinism, 2) > DETERMINISM_RANK.get(determinism, 2):
        problems.append(
            f"tool {name!r} is {impl.determinism} but the role's contract says {determinism}"
        )
    problems += _compare_objects(name, "input", input_schema, impl.input_schema, "")
    problems += _compare_objects(name, "output", output_schema, impl.output_schema, "")
    return problems
