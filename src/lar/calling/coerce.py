"""Schema-driven argument coercion and safe tool-name resolution (T3).

Small models get the *meaning* of a call right and its *types* wrong: ``{"n": "5"}`` where the
schema says integer, ``"Celsius"`` for the enum value ``"celsius"``, ``"Lisbon"`` where a list
of cities is wanted, ``math.factorial`` for the tool ``factorial``. Each fix here is one that
cannot change what the call means:

- a string holding a whole number becomes an integer (``"1,000"`` → 1000), a float with no
  fraction an integer (7.0 → 7); ``"2.5"`` is never rounded to an integer; a decimal comma,
  as most languages write one, is read as such (``"131,5"``, ``"1.234,5"``; three figures
  after a lone comma are thousands, as in English);
- a string holding a number becomes a number; ``"true"``/``"yes"`` and ``"false"``/``"no"``
  become booleans; a number where a string is wanted becomes its text;
- a whole number where the schema says ``number`` with OpenAPI's ``format: float`` (or
  ``double``) becomes a float (3 → 3.0): JSON cannot tell them apart, the tool's declared type
  can;
- an enum value matched ignoring case, only when exactly one value matches;
- a scalar where a list is wanted becomes a one-item list; JSON text where a list or an object
  is wanted is decoded;
- an argument key in the wrong case is renamed to the one parameter it matches;
- ``null`` (or ``""`` for a non-string parameter) given for an optional parameter is dropped,
  so the tool's default applies; so is an empty list or object for an optional parameter
  without a default (nothing given);
- a tool name is resolved only when exactly one listed tool matches it (``functions.x``,
  ``math.factorial`` → ``factorial``, ``Get-Weather`` → ``get_weather``);
- for a tool that cannot change anything (``read_only``, runs without asking), arguments it does
  not take are dropped when what is left is a whole call: the 1.5B wrote
  ``calculate(expression="70 * 2.20462", from_unit="kg", to_unit="pounds")``, was refused, and
  repeated the call until its turns ran out; so is an optional argument of the wrong type or
  outside its choices (its default applies). A tool that can change something is never called
  with less than the model wrote (an unknown ``append`` dropped would overwrite a file).

Anything else is left for validation to reject with a message the model can act on. Every
change is described, so the loop can report it and the trace keeps what the model wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lar.calling.prompt import MCP_SEPARATOR, SKILL_PREFIX
from lar.types import ToolCall

if TYPE_CHECKING:
    from lar.tools.base import Tool

__all__ = ["coerce_arguments", "coerce_call", "resolve_name", "fan_out", "fold_name"]

_INT_RE = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)$")
_COMMA_RE = re.compile(r"^[+-]?(\d{1,3}(\.\d{3})+|\d+),(\d{1,2}|\d{4,})$")
_NUM_RE = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$")
_TRUE = {"true", "yes", "y", "on"}
_FALSE = {"false", "no", "n", "off"}
_PREFIXES = ("functions.", "function.", "tools.", "tool.", "default_api.")


def fold_name(name: str) -> str:
    """The form two tool names are compared in: case, ``-`` and spaces don't count."""
    return re.sub(r"[\s\-]+", "_", name.strip()).casefold()


def resolve_name(name: str, names: Iterable[str]) -> str | None:
    """The listed tool ``name`` unambiguously refers to, or None."""
    names = list(names)
    if name in names:
        return name
    candidates = [name]
    low = name.strip()
    for prefix in _PREFIXES:
        if low.lower().startswith(prefix):
            candidates.append(low[len(prefix) :])
    if "." in low:
        candidates.append(low.rsplit(".", 1)[1])
    # a skill called by its own name: ``ascii-art`` for the tool ``skill_ascii_art``
    candidates += [SKILL_PREFIX + c for c in candidates if not c.lower().startswith(SKILL_PREFIX)]
    folded = {n: fold_name(n) for n in names}
    for cand in candidates:
        hits = [n for n, f in folded.items() if f == fold_name(cand)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            return None
    # an MCP server's tool by its own name: ``get_current_time`` for ``time__get_current_time``
    served = [n for n in names if fold_name(n.split(MCP_SEPARATOR, 1)[-1]) == fold_name(low)]
    return served[0] if len(served) == 1 and MCP_SEPARATOR in served[0] else None


def _resolve(schema: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 20:
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        seen += 1
    return schema


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {str(x) for x in t}
    return set()


def _fits(value: Any, schema: dict[str, Any], defs: Mapping[str, Any]) -> bool:
    """Whether ``value`` already has the schema's type (enums: is one of its values)."""
    schema = _resolve(schema, defs)
    if "enum" in schema:
        return value in schema["enum"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return any(_fits(value, s, defs) for s in schema[key])
    types = _types(schema)
    if not types:
        return True
    checks = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "null": value is None,
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }
    return any(checks.get(t, True) for t in types)


def _number(text: str) -> int | float | None:
    s = text.strip().replace("_", "")
    if _COMMA_RE.match(s):  # "131,5", "1.234,5": a decimal comma (never three digits after it)
        return float(s.replace(".", "").replace(",", "."))
    if not s or not _NUM_RE.match(s) or not any(c.isdigit() for c in s):
        return None
    s = s.replace(",", "")
    if _INT_RE.match(text.strip()):
        return int(s)
    try:
        return float(s)
    except ValueError:
        return None


def _coerce(
    value: Any, schema: dict[str, Any], defs: Mapping[str, Any], path: str, changes: list[str]
) -> Any:
    schema = _resolve(schema, defs)
    if "enum" in schema:
        if value in schema["enum"] or not isinstance(value, str):
            return value
        hits = [
            v for v in schema["enum"] if isinstance(v, str) and v.casefold() == value.casefold()
        ]
        if len(hits) == 1:
            changes.append(f"{path}: {json.dumps(value)} → {json.dumps(hits[0])}")
            return hits[0]
        return value
    for key in ("anyOf", "oneOf"):
        if key in schema:
            if _fits(value, schema, defs):
                return _descend(value, schema[key], defs, path, changes)
            for option in schema[key]:
                trial: list[str] = []
                out = _coerce(value, option, defs, path, trial)
                if _fits(out, option, defs) and trial:
                    changes.extend(trial)
                    return out
            return value
    types = _types(schema)
    if not types:
        return value
    if not _fits(value, schema, defs):
        out = _convert(value, types)
        if out is not _NO:
            changes.append(
                f"{path}: {json.dumps(value, ensure_ascii=False)} → "
                f"{json.dumps(out, ensure_ascii=False)}"
            )
            value = out
    if _wants_float(value, schema, types):
        changes.append(f"{path}: {value} → {float(value)}")
        value = float(value)
    if isinstance(value, list) and "array" in types:
        items = schema.get("items", {})
        return [_coerce(v, items, defs, f"{path}[{i}]", changes) for i, v in enumerate(value)]
    if isinstance(value, dict) and "object" in types:
        return _coerce_object(value, schema, defs, path, changes)
    return value


def _wants_float(value: Any, schema: dict[str, Any], types: set[str]) -> bool:
    return (
        type(value) is int and types == {"number"} and schema.get("format") in ("float", "double")
    )


def _descend(
    value: Any,
    options: list[dict[str, Any]],
    defs: Mapping[str, Any],
    path: str,
    changes: list[str],
) -> Any:
    """Inside a value that fits an anyOf option: fix its items or properties by that option."""
    for option in options:
        if _fits(value, option, defs) and isinstance(value, list | dict):
            return _coerce(value, option, defs, path, changes)
    return value


class _No:
    pass


_NO: Any = _No()


def _convert(value: Any, types: set[str]) -> Any:
    """One scalar conversion into one of ``types``, or ``_NO``."""
    if isinstance(value, str):
        return _from_text(value, types)
    if isinstance(value, float) and not isinstance(value, bool) and "integer" in types:
        if value.is_integer():
            return int(value)
        return _NO
    if isinstance(value, int | float) and not isinstance(value, bool) and "string" in types:
        return str(value)
    if "array" in types and not isinstance(value, list) and value is not None:
        return [value]
    return _NO


def _from_text(value: str, types: set[str]) -> Any:
    """A string into a number, boolean, JSON array/object or one-item array, or ``_NO``."""
    text = value.strip()
    if "integer" in types:
        n = _number(text)
        if isinstance(n, int):
            return n
        if isinstance(n, float) and n.is_integer():
            return int(n)  # "7.0"; "2.5" is never rounded
    if "number" in types:
        n = _number(text)
        if n is not None:
            return n
    if "boolean" in types:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
    loaded = _json_container(text, types)
    if loaded is not _NO:
        return loaded
    if "array" in types:
        return [value]
    return _NO


def _json_container(text: str, types: set[str]) -> Any:
    if not (
        ("array" in types and text.startswith("[")) or ("object" in types and text.startswith("{"))
    ):
        return _NO
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError):
        return _NO
    if isinstance(loaded, list) and "array" in types:
        return loaded
    if isinstance(loaded, dict) and "object" in types:
        return loaded
    return _NO


def _coerce_object(
    value: dict[str, Any],
    schema: dict[str, Any],
    defs: Mapping[str, Any],
    path: str,
    changes: list[str],
) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return value
    required = set(schema.get("required", []))
    folded: dict[str, list[str]] = {}
    for p in props:
        folded.setdefault(fold_name(p), []).append(p)
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = key
        if key not in props:
            hits = folded.get(fold_name(key), [])
            if len(hits) == 1 and hits[0] not in value:
                name = hits[0]
                changes.append(f"{_join(path, key)}: renamed to {name!r}")
        where = _join(path, name)
        if name in props and name not in required:
            p_schema = _resolve(props[name], defs)
            empty_text = v == "" and not _fits("", p_schema, defs)
            no_default = "default" not in p_schema
            empty = v in ([], {}) and no_default  # nothing given, said as an empty list
            if (v is None and not _fits(None, p_schema, defs)) or empty_text or empty:
                changes.append(f"{where}: {json.dumps(v)} dropped (optional)")
                continue
        out[name] = _coerce(v, props[name], defs, where, changes) if name in props else v
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def coerce_arguments(
    arguments: dict[str, Any], schema: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Arguments fixed to the schema, and a description of each change (empty: unchanged)."""
    changes: list[str] = []
    defs = schema.get("$defs", schema.get("definitions", {}))
    out = _coerce_object(dict(arguments), {"type": "object", **schema}, defs, "", changes)
    return out, changes


def coerce_call(call: ToolCall, tools: Mapping[str, Tool]) -> tuple[ToolCall, list[str]]:
    """The call with its name resolved and its arguments coerced; ``raw`` keeps the original."""
    changes: list[str] = []
    name = call.name
    if name not in tools:
        resolved = resolve_name(name, tools)
        if resolved is not None:
            changes.append(f"tool {name!r} → {resolved!r}")
            name = resolved
    tool = tools.get(name)
    arguments = call.arguments
    if tool is not None:
        arguments, arg_changes = coerce_arguments(call.arguments, tool.parameters)
        changes.extend(arg_changes)
        arguments = _without_unknown(arguments, tool, changes)
    if not changes:
        return call, []
    raw = call.raw or json.dumps(
        {"name": call.name, "arguments": call.arguments}, ensure_ascii=False
    )
    return replace(call, name=name, arguments=arguments, raw=raw), changes


def _without_unknown(arguments: dict[str, Any], tool: Tool, changes: list[str]) -> dict[str, Any]:
    """``arguments`` without what ``tool`` cannot take, where that is safe (see above): the
    arguments it does not have, and optional ones of the wrong type or outside their choices
    (``file_find(sort="line")``: its default applies)."""
    props = tool.parameters.get("properties", {})
    if not props or not tool.harmless:
        return arguments
    required = set(tool.parameters.get("required", []))
    if any(p not in arguments for p in required):
        return arguments  # not a whole call without them: left for validation to explain
    defs = tool.parameters.get("$defs", {})
    unknown = [k for k in arguments if k not in props]
    wrong = [
        k
        for k, v in arguments.items()
        if k in props and k not in required and not _fits(v, props[k], defs)
    ]
    if unknown:
        shown = ", ".join(repr(k) for k in unknown)
        changes.append(f"{shown} dropped ({tool.name} takes no such argument and changes nothing)")
    for k in wrong:
        changes.append(f"{k}: {json.dumps(arguments[k])} dropped (not a value it takes; default)")
    return {k: v for k, v in arguments.items() if k not in unknown and k not in wrong}


def fan_out(call: ToolCall, tool: Tool) -> list[ToolCall] | None:
    """One call per item when a list was packed into a parameter that takes one value.

    ``get_weather(city=["Porto", "Faro"])`` → ``get_weather(city="Porto")``,
    ``get_weather(city="Faro")``. Only when exactly one argument is such a list, of at least two
    scalars; otherwise None (validation reports the problem).
    """
    props = tool.parameters.get("properties", {})
    defs = tool.parameters.get("$defs", {})
    packed = []
    for key, value in call.arguments.items():
        schema = _resolve(props.get(key, {}), defs)
        if (
            isinstance(value, list)
            and len(value) >= 2
            and all(isinstance(v, str | int | float) for v in value)
            and key in props
            and not _fits(value, schema, defs)
            and all(_fits(v, schema, defs) for v in value)
        ):
            packed.append(key)
    if len(packed) != 1:
        return None
    key = packed[0]
    raw = call.raw or json.dumps(
        {"name": call.name, "arguments": call.arguments}, ensure_ascii=False
    )
    return [
        replace(call, id=f"{call.id}_{i}", arguments={**call.arguments, key: v}, raw=raw)
        for i, v in enumerate(call.arguments[key], 1)
    ]
