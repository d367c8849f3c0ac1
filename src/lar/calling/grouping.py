"""A figure the request writes with points between groups of thousands, passed as a decimal.

"Was ergeben 95 % von 9.385?" asks for 95 % of nine thousand three hundred eighty-five; the
1.5B passes ``9.385`` to the calculator and answers 8.9. Where the request's own way of writing
numbers groups thousands with a point — its language is one that does (German, Spanish,
Portuguese …; py3langid sure of the group, not of one language), or it writes a decimal comma
itself ("19,5") — a figure of one to three digits
followed by groups of exactly three (``9.385``, ``14.261``, ``1.250.000``, ``2.340,5``) is that
number, and a call that passes it the English way gets the number instead. Read from the
request's figures and its language, never from its words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from lar.calling.relevance import SURE, language_share

__all__ = ["GROUPING_LANGUAGES", "grouped_figures", "ungrouped"]

GROUPING_LANGUAGES = frozenset(
    "German Spanish Portuguese Italian Dutch Danish Indonesian Turkish Greek Romanian "
    "Slovenian Croatian Serbian Vietnamese Catalan".split()
)
"""Languages whose usual thousands separator is a point (CLDR's number symbols)."""

_DOTTED = re.compile(r"(?<![\w.,])([1-9]\d{0,2}(?:\.\d{3})+)(,\d+)?(?![\w]|[.,]\d)")
_DECIMAL_COMMA = re.compile(r"(?<![\w.,])\d+,\d{1,2}(?![\w]|[.,]\d)")
"""A decimal comma the request writes itself ("19,5", "3,75"): three digits would be a
thousands group the English way."""


def grouped_figures(request: str, groups: bool | None = None) -> dict[str, float]:
    """The figures ``request`` writes with points between thousands, as written → value
    (``{"9.385": 9385.0, "2.340,5": 2340.5}``); empty when the request's way of writing
    numbers does not group with a point, or nothing says it does. ``groups``: whether it does
    (None: it does when the request writes a decimal comma, or py3langid is sure, together
    over ``GROUPING_LANGUAGES``, that it is written in one of them)."""
    if not _DOTTED.search(request):
        return {}
    if groups is None:
        groups = bool(_DECIMAL_COMMA.search(request)) or (
            language_share(request, GROUPING_LANGUAGES) >= SURE
        )
    if not groups:
        return {}
    out: dict[str, float] = {}
    for m in _DOTTED.finditer(request):
        whole, fraction = m.group(1), m.group(2) or ""
        out[whole + fraction] = float(whole.replace(".", "") + fraction.replace(",", "."))
    return out


def ungrouped(arguments: Mapping[str, Any], figures: Mapping[str, float]) -> dict[str, Any]:
    """The arguments that pass one of ``figures`` the English way, with the figure instead:
    a number equal to the written form read as a decimal (``9.385``), or a text holding the
    written form (``"0.95 * 9.385"`` → ``"0.95 * 9385"``). Only the changed ones."""
    fixed: dict[str, Any] = {}
    for name, value in arguments.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            for written, number in figures.items():
                if "," not in written and math.isclose(value, float(written), rel_tol=1e-12):
                    fixed[name] = int(number) if number.is_integer() else number
                    break
        elif isinstance(value, str):
            text = value
            for written, number in figures.items():
                plain = str(int(number)) if number.is_integer() else repr(number)
                text = re.sub(rf"(?<![\w.,]){re.escape(written)}(?![\w]|[.,]\d)", plain, text)
            if text != value:
                fixed[name] = text
    return fixed
