"""calculate and convert_units (B1): exact arithmetic and unit conversion, so a small model
never has to work a figure out in its head. Neither can change anything, so both run without
asking. Expressions are evaluated by ``simpleeval`` (no names, attributes or calls beyond the
listed functions; bounded powers), never by ``eval``; units are ``pint``'s.
"""

from __future__ import annotations

import ast
import bisect
import math
import re
import statistics
from functools import lru_cache
from typing import Any

from lar.tools.base import NotPossibleHere, ToolContext, tool

__all__ = [
    "calculate",
    "convert_units",
    "number_text",
    "unit_factor",
    "wrong_unit_factor",
    "is_currency",
]


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


def _computation(text: str, expression: str) -> str:
    """``text`` as the arithmetic to do: ``total = 3 * 4`` is ``3 * 4``; a number alone, or a
    name set to one (``total = 12345``), computes nothing, so it is refused: its "result" would
    let a figure the model made up pass as worked out. A program or a lambda is pointed to a
    code tool."""
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError:
        return text  # the evaluator says what is wrong with it
    if not tree.body:
        raise ValueError("the expression is empty: write the arithmetic to work out")
    if len(tree.body) != 1:
        raise ValueError(
            f"{expression!r} is a program, not one expression: run code with a code tool "
            "(code_run), if you have one; here write the arithmetic alone"
        )
    node = tree.body[0]
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        node = ast.Expr(node.value)
        text = ast.get_source_segment(text, node.value) or text
    if not isinstance(node, ast.Expr):
        raise ValueError(f"{expression!r} is not an expression; write the arithmetic alone")
    value = node.value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub | ast.UAdd):
        value = value.operand
    if isinstance(value, ast.Constant):
        raise ValueError(
            f"{expression!r} computes nothing: write the arithmetic that gives the figure from "
            "the numbers you were given"
        )
    if any(isinstance(n, ast.Lambda) for n in ast.walk(value)):
        raise ValueError(
            f"{expression!r} is Python code, not arithmetic: run code with a code tool "
            "(code_run), if you have one, or write the numbers and + - * / here"
        )
    return text


_FILE_NAME = re.compile(r"""(["']?)([\w./-]+\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w.])\1""")
_NUMBER = re.compile(r"[-+]?(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")
_FILE_NUMBERS = 10_000


def _with_files(expression: str, ctx: ToolContext) -> tuple[str, list[str]]:
    """``expression`` with each workspace file it names replaced by the list of the file's
    numbers, and a line per file saying what was read: ``sum(numbers.txt)`` is the sum of the
    file's numbers, with no figure copied by hand (where a small model slips). A file qualifies
    when each of its lines holds at most one number ("rent: 850" is one); a line with several
    (a CSV row with a date) makes it fail, naming the line, rather than add up the wrong
    numbers. Only files inside the workspace are read."""
    from lar.tools.builtin.files import read_text

    shown: list[str] = []

    def numbers(match: re.Match[str]) -> str:
        name = match.group(2)
        try:
            if not (ctx.workspace / name).is_file():
                return match.group(0)  # a name like math.pi; a missing file fails in eval
        except OSError:
            return match.group(0)
        found: list[str] = []
        for n, line in enumerate(read_text(ctx, name).splitlines(), 1):
            on_line = _NUMBER.findall(line)
            if len(on_line) > 1:
                raise ValueError(
                    f"line {n} of {name} holds several numbers ({line.strip()[:60]!r}); read the "
                    "file and write the numbers you mean"
                )
            found += [x.replace(",", "") for x in on_line]
        if not found or len(found) > _FILE_NUMBERS:
            raise ValueError(f"{name} holds {len(found)} numbers; read it and write them")
        line = f"{name}: {', '.join(found[:20])}{' …' if len(found) > 20 else ''}"
        if line not in shown:
            shown.append(line)
        return "[" + ", ".join(found) + "]"

    return _FILE_NAME.sub(numbers, expression), shown


def number_text(value: float | int) -> str:
    """A result as people read it: integers exact, other values to 12 significant digits."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.12g}"


def _not_dates(expression: str) -> None:
    """A span of dates written as a subtraction ("1964-02-24 - 1961-04-13") reads as numbers
    and gives a wrong figure or none: the error names the call that counts it."""
    from lar.tools.builtin.dates import whole_dates

    days = sorted(whole_dates(_FILE_NAME.sub(" ", expression)))  # sum(sales-2024-01-05.csv)
    if not days:
        return
    until = f', until="{days[-1].isoformat()}"' if len(days) > 1 else ""
    raise ValueError(
        f'{expression!r} holds dates, not numbers: calendar(date="{days[0].isoformat()}"'
        f"{until}) counts the days between two dates and names the weekday of one"
    )


@tool(read_only=True, broad=True)
def calculate(expression: str, ctx: ToolContext) -> str:
    """Work out arithmetic exactly (+ - * / **, x% of y, sum, sqrt).

    Use it for every sum, percentage or other figure instead of working it out yourself.

    Args:
        expression: The arithmetic; a workspace file's name stands for the numbers in it
            (sum(numbers.txt), mean(prices.txt)).
    """
    from simpleeval import (  # type: ignore[import-untyped]
        EvalWithCompoundTypes,
        InvalidExpression,
    )

    _not_dates(expression)
    text, read = _with_files(expression, ctx)
    text = _computation(_normalized(text), expression)
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
    except InvalidExpression as exc:
        names = (m.group(2) for m in _FILE_NAME.finditer(expression))
        missing = [n for n in names if n.rsplit(".")[-1] not in _FUNCTIONS | _NAMES]
        if missing:
            where = f"no file {missing[0]!r} in the workspace ({ctx.workspace})"
            raise ValueError(f"cannot work out {expression!r}: {where}") from None
        raise ValueError(
            f"cannot work out {expression!r} ({exc}); write numbers and + - * / ** ( ) only, "
            "or one of the listed functions"
        ) from None
    except (
        TypeError,
        KeyError,
        OverflowError,
        statistics.StatisticsError,
    ) as exc:
        raise ValueError(
            f"cannot work out {expression!r} ({exc}); write numbers and + - * / ** ( ) only, "
            "or one of the listed functions"
        ) from None
    if isinstance(value, list | tuple) and read:
        raise ValueError(f"{expression!r} gives a list of numbers: write sum(…), mean(…) or max(…)")
    if not isinstance(value, int | float):
        raise ValueError(f"{expression!r} is not arithmetic (it gives {type(value).__name__})")
    where = f" ({'; '.join(read)})" if read else ""
    return f"{expression.strip()} = {number_text(value)}{where}"


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


_CURRENCIES = frozenset(
    "usd eur gbp jpy cny rmb chf cad aud brl inr mxn krw sek nok dkk pln czk huf try rub zar "
    "nzd sgd hkd ars clp cop euro euros dollar dollars yen yuan renminbi franc francs real "
    "reais rupee rupees peso pesos won krona kronor krone zloty lira rouble ruble rand "
    "€ $ £ ¥ ₹ ₩ r$ 美元 欧元 日元 英镑 人民币 法郎 加元 港币 韩元 卢布 澳元".split()
)
"""Currency codes, names and signs: what a request for an exchange rate names as a unit."""


def is_currency(name: str) -> bool:
    """Whether ``name`` names a currency: a code, a name or a sign ("US dollars": the last
    word names it)."""
    words = name.casefold().split()
    return bool(words) and words[-1] in _CURRENCIES


_COMMON_UNITS = (
    "mm cm m km inch foot yard mile nautical_mile "
    "mg g kg tonne ounce pound stone ton "
    "ml l cup pint quart gallon fluid_ounce tablespoon teaspoon imperial_gallon imperial_pint "
    "m**2 km**2 hectare acre foot**2 inch**2 mile**2 "
    "km/h m/s mile/hour knot foot/s "
    "J kJ cal kcal Wh kWh BTU W kW hp "
    "Pa kPa bar psi atm mmHg "
    "second minute hour day week"
).split()


_UNIT_WORD = re.compile(r"[^\W\d_][\w°/]*")


@lru_cache(maxsize=1)
def _factors() -> tuple[float, ...]:
    units = _units()
    out: set[float] = set()
    for a in _COMMON_UNITS:
        for b in _COMMON_UNITS:
            if a == b:
                continue
            try:
                out.add(float(units.Quantity(1, a).to(b).magnitude))
            except Exception:  # different kinds: no factor between them
                continue
    return tuple(sorted(out))


@lru_cache(maxsize=64)
def _named_units(text: str) -> tuple[Any, ...]:
    """The common units a text names (in any language that spells them as pint does: "km",
    "kg", "miles"); other words, and words pint reads as rare units, are skipped."""
    units, common = _units(), _common()
    out: list[Any] = []
    for token in _UNIT_WORD.findall(text.replace("/", " ")):
        if token.casefold() == "in":  # the word, far more often than the inch
            continue
        try:
            unit = units.parse_units(_unit(token))
        except Exception:  # not a unit pint knows (most words are not)
            continue
        if unit in common and unit not in out:  # not "um" (micrometre) or "das" (decasecond)
            out.append(unit)
    return tuple(out)


@lru_cache(maxsize=64)
def _pair_factors(text: str) -> tuple[float, ...]:
    """The factors between every two units of one kind that ``text`` names (both ways)."""
    units, named = _units(), _named_units(text)
    out = []
    for a in named:
        for b in named:
            if a != b and a.dimensionality == b.dimensionality:
                try:
                    out.append(float(units.Quantity(1, a).to(b).magnitude))
                except Exception:  # an offset unit (degC): no plain factor
                    continue
    return tuple(out)


@lru_cache(maxsize=1)
def _common() -> frozenset[Any]:
    units = _units()
    return frozenset(units.parse_units(u) for u in _COMMON_UNITS)


def unit_factor(figure: str, request: str = "") -> bool:
    """Whether ``figure`` ("2.20462", "0.3048", "3.785") is a unit factor the model knows, to
    the precision it is written with, as opposed to an exchange rate or a price it made up.
    When ``request`` names two units of one kind ("yards", "meters"), it must be the factor
    between two of them (or its inverse): 1.60934 is a unit factor, but not for yards; when it
    names fewer (or in words pint does not know), any factor between two common units passes."""
    try:
        x = float(figure.replace(",", ""))
    except ValueError:
        return False
    decimals = len(figure.partition(".")[2])
    slack = 0.6 * 10.0**-decimals
    if x <= slack:
        return False
    named = _pair_factors(request) if request else ()
    if named:
        return any(abs(factor - x) <= slack for factor in named)
    factors = _factors()
    i = bisect.bisect_left(factors, x - slack)
    return i < len(factors) and factors[i] <= x + slack


def wrong_unit_factor(figures: list[str], request: str) -> bool:
    """Whether ``figures`` (the numbers of a calculation that the request did not give, such as
    ``["100"]`` in ``2 * 100``) multiply to none of the factors between two units of one kind
    that ``request`` names, nor their inverses, within 1 %: "2 cups in ml" worked out with 100.
    False when the request names no such pair (nothing to check against) or figures is empty."""
    factors = _pair_factors(request)
    if not factors or not figures:
        return False
    product = math.prod(float(f.replace(",", "")) for f in figures)
    return all(abs(product - f) > 0.01 * f and abs(product * f - 1) > 0.01 for f in factors)


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

    money = [u for u in (from_unit, to_unit) if is_currency(u)]
    if money:  # before pint, which reads "€" as nothing it can say
        raise NotPossibleHere(
            f"Lar cannot convert currencies ({' to '.join(money)}): it has no exchange "
            "rates here (they change by the hour), so nothing was converted. Check a "
            "bank's or a currency site's current rate."
        )
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
    except Exception:  # a sign or a phrase pint's parser cannot take ("€", "a lot")
        raise ValueError(
            f"{from_unit!r} to {to_unit!r}: not units pint can read; write them as pint spells "
            "them (e.g. km, mile, kg, lb, degC, degF, l, cup, GB)"
        ) from None
    shown = number_text(float(converted.magnitude))
    return f"{number_text(value)} {from_unit} = {shown} {to_unit}"
