"""JSON repair (T3): strict JSON first, then Python literals, then json-repair."""

from __future__ import annotations

import ast
import json
from typing import Any

import json_repair

__all__ = ["load_json"]


def load_json(raw: str) -> tuple[Any, bool]:
    """Decode ``raw``; returns ``(value, repaired)``. ``value`` is None when nothing usable is left.

    Order matters: strict JSON is exact; ``ast.literal_eval`` decodes Python-style dicts
    (single quotes, True/None) without guessing; json-repair fixes the rest (trailing commas,
    raw newlines in strings, missing closing braces, stray prose).
    """
    text = raw.strip()
    try:
        return json.loads(text), False
    except ValueError:
        pass
    try:
        value = ast.literal_eval(text)
        if isinstance(value, dict | list):
            return value, True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass  # TypeError: e.g. a "set" of dicts, {{...}, {...}}, which Python cannot hash
    try:
        value = json_repair.loads(text)
    except Exception:  # json-repair raises assorted errors on hopeless input; treat as no value
        return None, False
    if value in ("", None) or not isinstance(value, dict | list):
        return None, False
    return value, True
