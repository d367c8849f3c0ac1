"""A tool's Python-like signature line (T2): what the compact tool listing shows the model and
what an argument error quotes back to it."""

from __future__ import annotations

import json
from typing import Any, Protocol

__all__ = ["signature"]


class _Described(Protocol):
    """A tool or its data-only spec (lar.types.ToolSpec)."""

    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


_SCALARS = {"integer": "int", "number": "float", "string": "str", "boolean": "bool", "null": "None"}


def _type_of(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        ref = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        return _type_of(ref, defs)
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = [_type_of(s, defs) for s in schema[key]]
            return "|".join(p for p in parts if p != "None") or "None"
    t = schema.get("type")
    if t == "array":
        return f"list[{_type_of(schema.get('items', {}), defs)}]"
    if t == "object":
        props = schema.get("properties")
        if props:
            inner = ", ".join(f"{k}: {_type_of(v, defs)}" for k, v in props.items())
            return "{" + inner + "}"
        return "dict"
    if isinstance(t, str):
        return _SCALARS.get(t, t)
    return "any"


def _literal(value: Any) -> str:
    """A default as Python writes it (``True``, ``None``, ``"celsius"``, ``3``)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def signature(tool: _Described) -> str:
    """``name(a: int, unit: "c"|"f" = "c", note?: str)`` from the tool's JSON Schema.

    Python's own notation: a parameter with a default shows it; an optional one without a
    default is marked ``?``.
    """
    schema = tool.parameters
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    params = []
    for pname, pschema in schema.get("properties", {}).items():
        text = f"{pname}: {_type_of(pschema, defs)}"
        if pname not in required:
            if "default" in pschema and pschema["default"] is not None:
                text += f" = {_literal(pschema['default'])}"
            else:
                text = f"{pname}?: {_type_of(pschema, defs)}"
        params.append(text)
    return f"{tool.name}({', '.join(params)})"
