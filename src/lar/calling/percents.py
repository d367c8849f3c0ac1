"""A percentage the request gives, passed on the wrong scale.

The request says "4.5 %" (or "4,5 %", "4.5％"); the tool's parameter says it takes a percent
("rate_percent: yearly interest rate in percent (5 for 5 %)") and the model passes ``0.045`` —
or the parameter takes a fraction ("as a decimal", "0.05 for 5 %") and the model passes
``4.5``. Both are read from the request's figures and the tool's own schema, never from the
request's words, so they are the same in every language.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["percent_figures", "rescaled_percents"]

_PERCENT = re.compile(r"(?<![\d.,])(\d+(?:[.,]\d+)?)\s?[%％]")
_SAYS_PERCENT = re.compile(r"percent|percentage|\bpct\b|%|％", re.I)
_SAYS_FRACTION = re.compile(r"\bdecimal\b|\bfraction\b|\bratio\b|0\.\d+ for \d+", re.I)


def percent_figures(text: str) -> list[float]:
    """The figures ``text`` writes with a percent sign, a decimal comma read as a point."""
    return [float(m.group(1).replace(",", ".")) for m in _PERCENT.finditer(text)]


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _scale(name: str, spec: Mapping[str, Any]) -> str | None:
    """``"percent"`` or ``"fraction"``: what scale the parameter says it takes, if it says."""
    kinds = spec.get("type")
    if kinds not in ("number", "integer") and not (
        isinstance(kinds, list) and {"number", "integer"} & set(kinds)
    ):
        return None
    text = f"{name.replace('_', ' ')} {spec.get('description', '')}"
    fraction, percent = _SAYS_FRACTION.search(text), _SAYS_PERCENT.search(text)
    if fraction and kinds != "integer":
        return "fraction"  # "the rate as a decimal (0.05 for 5 %)": both words, the decimal rules
    return "percent" if percent else None


def rescaled_percents(
    parameters: Mapping[str, Any], arguments: Mapping[str, Any], request: str
) -> dict[str, float]:
    """Arguments to put on the scale their parameter says, name → new value: a percentage of
    the request passed as a fraction to a parameter in percent (0.045 for "4.5 %"), or as a
    percent to one that takes a fraction (4.5 for "4.5 %" where 0.045 is meant). A value that
    matches no percentage of the request is left as the model wrote it."""
    figures = percent_figures(request)
    if not figures:
        return {}
    props = parameters.get("properties", {})
    out: dict[str, float] = {}
    for name, value in arguments.items():
        spec = props.get(name)
        if not isinstance(spec, Mapping) or isinstance(value, bool):
            continue
        if not isinstance(value, int | float):
            continue
        scale = _scale(name, spec)
        if scale == "percent":
            hit = [f for f in figures if _same(value * 100, f) and not _same(value, f)]
            if hit and not any(_same(value, f) for f in figures):
                out[name] = int(hit[0]) if hit[0].is_integer() else hit[0]
        elif scale == "fraction":
            if any(_same(value, f) for f in figures) and value > 1:
                out[name] = round(value / 100, 12)
    return out
