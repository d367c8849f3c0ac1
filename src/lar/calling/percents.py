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

_PERCENT = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:[.,]\d+)?)\s?[%％]")
_NAMED_PERCENT = re.compile(r"percent|\bpct\b", re.I)
"""In a parameter's name (``rate_percent``, ``tip_pct``)."""
_SAYS_PERCENT = re.compile(
    r"\bin percent|\bpercentage\b|\bas a percent|\b\d+ for \d+(?:[.,]\d+)?\s?[%％]", re.I
)
"""In its description: "in percent", "a percentage", "5 for 5 %"."""
_SAYS_FRACTION = re.compile(r"\bdecimal\b|\bfraction\b|\b0\.\d+ for \d+(?:[.,]\d+)?\s?[%％]", re.I)
"""In its description: "as a decimal", "a fraction", "0.05 for 5 %"."""


def percent_figures(text: str) -> list[float]:
    """The figures ``text`` writes with a percent sign, a decimal comma read as a point
    (``4,5 %``). Groups of three after commas are thousands (``1,000,000%``); one such group
    (``4,500 %``: 4.5 in German, 4500 in English) is left out as ambiguous."""
    out = []
    for m in _PERCENT.finditer(text):
        figure = m.group(1)
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+", figure):
            if figure.count(",") > 1:
                out.append(float(figure.replace(",", "")))
            continue
        out.append(float(figure.replace(",", ".")))
    return out


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _scale(name: str, spec: Mapping[str, Any]) -> str | None:
    """``"percent"`` or ``"fraction"``: what scale the parameter says it takes, if it says."""
    kinds = spec.get("type")
    if kinds not in ("number", "integer") and not (
        isinstance(kinds, list) and {"number", "integer"} & set(kinds)
    ):
        return None
    description = str(spec.get("description", ""))
    if _SAYS_FRACTION.search(description) and kinds != "integer":
        return "fraction"  # "the rate as a decimal (0.05 for 5 %)"
    if _NAMED_PERCENT.search(name) or _SAYS_PERCENT.search(description):
        return "percent"
    return None


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
