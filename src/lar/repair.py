"""JSON repair (T3): strict JSON first, then Python literals, then json-repair.

A base-layer utility: the protocol parser (lar.calling) and the engines (native tool-call
arguments) both decode model output with it.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

__all__ = [
    "load_json",
    "decode_arguments",
    "too_deep",
    "nesting",
    "jsonable",
    "no_surrogates",
    "MAX_DEPTH",
    "REPAIR_MAX_CHARS",
    "REPAIR_MAX_COST",
]

MAX_DEPTH = 64
"""Deeper nesting is not decoded: no tool takes it, and decoders recurse once per level."""
REPAIR_MAX_CHARS = 4_000
"""Longer values are decoded strictly only: json-repair is pure Python and, on some broken
inputs, quadratic (0.6 s for 10,000 characters)."""

REPAIR_MAX_COST = 40_000
"""Length times nesting depth beyond which json-repair is not tried: its time grows with both
(51 open braces before 1,700 characters: 0.8 s); this bound is about 0.35 s."""

_NOT_BRACKET = re.compile(r"[^\[\]{}()]+")
SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
"""A lone surrogate (a broken stream, a JSON escape such as ``\\udfff``): not storable as UTF-8."""


def nesting(text: str) -> int:
    """How deep brackets nest (quotes ignored: an upper bound, cheap)."""
    depth = deepest = 0
    for ch in _NOT_BRACKET.sub("", text):
        if ch in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets nest deeper than ``limit`` (quotes ignored: an upper bound, cheap)."""
    return nesting(text) > limit


def load_json(raw: str, *, depth_checked: bool = False, repair: bool = True) -> tuple[Any, bool]:
    """Decode ``raw``; returns ``(value, repaired)``. ``value`` is None when nothing usable is left.

    Order matters: strict JSON is exact; ``ast.literal_eval`` decodes Python-style dicts
    (single quotes, True/None) without guessing; json-repair fixes the rest (trailing commas,
    raw newlines in strings, missing closing braces, stray prose).
    """
    text = raw.strip()
    if not depth_checked and too_deep(text):
        return None, False
    try:
        return json.loads(text), False
    except (ValueError, RecursionError):
        pass
    if not repair or len(text) > REPAIR_MAX_CHARS:
        return None, False
    if len(text) * max(1, nesting(text)) > REPAIR_MAX_COST:
        return None, False
    try:
        value = ast.literal_eval(text)
        if isinstance(value, dict | list):
            return jsonable(value), True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass  # TypeError: e.g. a "set" of dicts, {{...}, {...}}, which Python cannot hash
    try:
        import json_repair  # only on the repair path: ~50 ms to import

        value = json_repair.loads(text)
    except Exception:  # json-repair raises assorted errors on hopeless input; treat as no value
        return None, False
    if value in ("", None) or not isinstance(value, dict | list):
        return None, False
    return value, True


def jsonable(value: Any) -> Any:
    """A Python literal as JSON types: sets and tuples become lists, bytes text, keys strings
    (``ast.literal_eval`` gives all of these; tool arguments must round-trip through JSON)."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [jsonable(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, complex):
        return str(value)
    return value


def no_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return SURROGATE_RE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {no_surrogates(k): no_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [no_surrogates(v) for v in value]
    return value


def decode_arguments(raw: Any) -> tuple[dict[str, Any], bool]:
    """A native call's ``arguments`` (a JSON string by the OpenAI convention) → dict."""
    if isinstance(raw, dict):
        return raw, False
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, False
    value, repaired = load_json(str(raw))
    if isinstance(value, dict):
        return no_surrogates(value), repaired
    return {"input": raw}, True
