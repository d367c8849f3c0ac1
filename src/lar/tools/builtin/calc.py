"""calculate and convert_units (B1): exact arithmetic and unit conversion, so a small model
never has to work a figure out in its head. Neither can change anything, so both run without
asking. Expressions are evaluated by ``simpleeval`` (no names, attributes or calls beyond the
listed functions; bounded powers), never by ``eval``; units are ``pint``'s.
"""

from __future__ import annotations

import math
import re
import statistics
from functools import lru_cache
from typing import Any

from lar.tools.base import tool

__all__ = ["calculate", "convert_units", "number_text"]


def _each(xs: tuple[Any, ...]) -> Any:
    """An aggregate's numbers, given one by one or as one list: sum(1, 2) or sum([1, 2])."""
    return xs[0] if len(xs) == 1 and isinstance(xs[0], list | tuple) else xs


_FUNCTIONS: dict[str, Any] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sum": lambda *xs: sum(_each(xs)),
    "mean": lambda *xs: statistics.fmean(_each(xs)),
    "average": lambda *xs: statistics.fmean(_each(xs)),
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
    "factorial": math.factorial,
}
_NAMES = {"pi": math.pi, "e": math.e}
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*(?:of\s+)", re.IGNORECASE)
_PERCENT_END = re.compile(r"(\d+(?:\.\d+)?)\s*%(?=\s*(?:$|[)+\-*/]))")


def _normalized(expression: str) -> str:
    """How people write arithmetic, as Python's: 2,340 → 2340, 17% of x → 17/100*x,
    ×/÷/^ → * / **. A comma between groups of three is read as a thousands separator only
    when the expression calls no function (whose arguments commas separate)."""
    text = expression.strip().rstrip("=?").strip()
    text = text.replace("×", "*").replace("÷", "/").replace("^", "**").replace("−", "-")
    if not re.search(r"[A-Za-z_]\s*\(", text):
        text = _GROUPED.sub(lambda m: m.group(0).replace(",", ""), text)
    text = _PERCENT_OF.sub(r"(\1/100)*", text)
    return _PERCENT_END.sub(r"(\1/100)", text)


def number_text(value: float | int) -> str:
    """A result as people read it: integers exact, other values to 12 significant digits."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.12g}"


@tool(read_only=True, broad=True)
def calculate(expression: str) -> str:
    """Work out arithmetic exactly (+ - * / **, x% of y, sum, sqrt).

    Use it for every sum, percentage or other figure instead of working it out yourself.

    Args:
        expression: The arithmetic.
    """
    from simpleeval import (  # type: ignore[import-untyped]
        EvalWithCompoundTypes,
        InvalidExpression,
    )

    text = _normalized(expression)
    # Lists too: the 1.5B writes sum([12.5, 7.25, 30]) as often as sum(12.5, 7.25, 30).
    evaluator = EvalWithCompoundTypes(functions=_FUNCTIONS, names=_NAMES)
    try:
        value = evaluator.eval(text)
    except ZeroDivisionError:
        raise ValueError(f"{expression!r} divides by zero") from None
    except SyntaxError:
        raise ValueError(
            f"{expression!r} is not arithmetic; write numbers and + - * / ** ( ) only, or one "
            "of the listed functions"
        ) from None
    except (
        InvalidExpression,
        TypeError,
        KeyError,
        OverflowError,
        statistics.StatisticsError,
    ) as exc:
        raise ValueError(
            f"cannot work out {expression!r} ({exc}); write numbers and + - * / ** ( ) only, "
            "or one of the listed functions"
        ) from None
    if not isinstance(value, int | float):
        raise ValueError(f"{expression!r} is not arithmetic (it gives {type(value).__name__})")
    return f"{expression.strip()} = {number_text(value)}"


@lru_cache(maxsize=1)
def _units() -> Any:
    import pint

    return pint.UnitRegistry(autoconvert_offset_to_baseunit=True)


_ALIASES = {
    "celsius": "degC",
    "°c": "degC",
    "c": "degC",
    "fahrenheit": "degF",
    "°f": "degF",
    "f": "degF",
    "kelvin": "K",
    "miles": "mile",
    "kilometres": "km",
    "kilometers": "km",
    "kph": "km/h",
    "mph": "mile/hour",
}


def _unit(name: str) -> str:
    key = name.strip()
    return _ALIASES.get(key.casefold(), key)


@tool(read_only=True, broad=True)
def convert_units(value: float, from_unit: str, to_unit: str) -> str:
    """Convert a quantity to other units (miles to km, F to C).

    Lengths, weights, volumes, temperatures, speeds, areas, times, energy and data sizes.

    Args:
        value: The amount.
        from_unit: Its unit, e.g. "mile", "degF", "cup".
        to_unit: The unit wanted, e.g. "km", "degC", "ml".
    """
    import pint

    units = _units()
    source, target = _unit(from_unit), _unit(to_unit)
    try:
        converted = units.Quantity(value, source).to(target)
    except pint.errors.UndefinedUnitError as exc:
        raise ValueError(
            f"unknown unit {exc.unit_names!r}; write it as pint spells it (e.g. km, mile, kg, "
            "lb, degC, degF, l, cup, GB)"
        ) from None
    except pint.errors.DimensionalityError:
        raise ValueError(
            f"{from_unit} cannot be converted to {to_unit} (different kinds)"
        ) from None
    shown = number_text(float(converted.magnitude))
    return f"{number_text(value)} {from_unit} = {shown} {to_unit}"
