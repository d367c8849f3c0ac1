"""Guards and rules: small expressions over step outputs, never Python's ``eval``.

``parsing.status == "success" and matching.missing_count >= 0`` — names, dotted field references,
constants (strings, numbers, ``true``/``false``/``null``), lists, comparisons (``== != < <= > >=
in``, ``not in``), ``and``, ``or``, ``not``. Anything else is refused when the role is read.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from lar.errors import LarError

__all__ = ["ExprError", "compile_expr", "references", "evaluate", "MISSING"]


class ExprError(LarError):
    pass


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What a reference to a field that is not there reads as: every comparison with it is false."""

_CONSTANTS = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return None if node.id in _CONSTANTS else node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _check(node: ast.AST, text: str) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body, text)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _check(node.operand, text)
    elif isinstance(node, ast.Compare):
        for op in node.ops:
            if type(op) not in _COMPARE:
                raise ExprError(f"{text!r}: operator {type(op).__name__} is not allowed")
        for sub in (node.left, *node.comparators):
            _check(sub, text)
    elif isinstance(node, ast.List | ast.Tuple):
        for elt in node.elts:
            _check(elt, text)
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, str | int | float | bool | type(None)):
            raise ExprError(f"{text!r}: constant {node.value!r} is not allowed")
    elif isinstance(node, ast.Name | ast.Attribute):
        if isinstance(node, ast.Attribute) and _dotted(node) is None:
            raise ExprError(f"{text!r}: only dotted field names (step.field) may be read")
    else:
        raise ExprError(
            f"{text!r}: {type(node).__name__} is not allowed (use field references, constants, "
            "comparisons, and/or/not)"
        )


@lru_cache(maxsize=512)
def compile_expr(text: str) -> ast.Expression:
    """Parse and check an expression; ExprError says what is not allowed."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"{text!r}: not an expression ({exc.msg})") from None
    _check(tree, text)
    return tree


def references(text: str) -> list[str]:
    """The dotted field references an expression reads, in order, without repeats."""
    out: list[str] = []

    def walk(node: ast.AST) -> None:
        ref = _dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None
        if ref:
            if ref not in out:
                out.append(ref)
            return
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(compile_expr(text))
    return out


def lookup(facts: Mapping[str, Any], ref: str) -> Any:
    value: Any = facts
    for part in ref.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return MISSING
    return value


def _eval(node: ast.AST, facts: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, facts)
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, facts) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        return not _eval(node.operand, facts)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, facts)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, facts)
            if left is MISSING or right is MISSING:
                return False
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:
                return False
            left = right
        return True
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, facts) for e in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    ref = _dotted(node)
    return lookup(facts, ref) if ref else MISSING


def evaluate(text: str, facts: Mapping[str, Any]) -> bool:
    """Whether the expression holds over ``facts`` (a missing field makes a comparison false)."""
    value = _eval(compile_expr(text), facts)
    return bool(value) and value is not MISSING
