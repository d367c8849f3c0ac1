"""Berkeley Function Calling Leaderboard cases for ``lar eval``, scored by BFCL's own rules.

``load_bfcl(path)`` reads a ``BFCL_v4_<category>.json`` file (one JSON object per line) and its
``possible_answer/`` twin into ``lar.evals.toolcalls.Case`` objects whose ``check`` is
``bfcl_check``: the rules of BFCL's AST checker for Python, restated here —

- simple and live_simple: exactly one call; ``multiple``: as many calls as expected (one), checked
  against the expected function; ``parallel``: as many calls as expected, matched in any order,
  each expected call to a distinct model call; ``irrelevance``: right when no call is made;
- the function name must match; every required parameter must be given; every given parameter
  must exist in the schema and in the answer;
- types follow BFCL's mapping (``dict``, ``float``, ``tuple``, ``any`` included): an int passes
  for a float; a tuple compares as a list; array items are type-checked one level deep; a value
  whose type is that of the accepted values (a variable name given as a string) is compared as is;
- strings compare after removing spaces and ``,./-_*^`` and lowering case; lists element-wise so;
  dicts key by key (a key absent from the model's dict is fine if ``""`` is accepted for it);
- a parameter the model left out is right only if ``""`` is among its accepted values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lar.errors import LarError

__all__ = ["load_bfcl", "bfcl_check", "to_json_schema", "CATEGORY_OF", "standardize"]

CATEGORY_OF = {
    "simple_python": "single",
    "live_simple": "single",
    "multiple": "choose",
    "parallel": "parallel",
    "irrelevance": "abstain",
}
"""BFCL category → the category ``lar eval`` reports it under."""

_PY_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_NESTED = ("array", "tuple")
_SCHEMA_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


class BfclError(LarError):
    pass


def to_json_schema(schema: Any) -> Any:
    """BFCL's parameter schema as standard JSON Schema (``dict`` → object, ``float`` → number
    with OpenAPI's ``format: float``, ``tuple`` → array, ``any`` → no type), so the tools
    validate, and their arguments are coerced, as they are declared."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: to_json_schema(v) for k, v in schema.items()}
    kind = schema.get("type")
    if kind == "any":
        out.pop("type")
    elif isinstance(kind, str) and kind in _SCHEMA_TYPES:
        out["type"] = _SCHEMA_TYPES[kind]
        if kind == "float":
            out.setdefault("format", "float")
    return out


def load_bfcl(path: Path) -> list[Any]:
    """The cases of one BFCL file, with their accepted answers (none for irrelevance)."""
    from lar.evals.toolcalls import Case

    match = re.fullmatch(r"BFCL_v\d+_(\w+)\.json", path.name)
    if match is None or match.group(1) not in CATEGORY_OF:
        raise BfclError(f"{path}: not a BFCL file of {', '.join(CATEGORY_OF)}")
    category = match.group(1)
    answers: dict[str, Any] = {}
    if category != "irrelevance":
        for _, row in _lines(path.parent / "possible_answer" / path.name):
            answers[row["id"]] = row["ground_truth"]
    cases = []
    for where, row in _lines(path):
        turns = row["question"]
        if len(turns) != 1:
            raise BfclError(f"{where}: multi-turn cases are not supported")
        question = "\n".join(m["content"] for m in turns[0] if m.get("role") == "user")
        functions = row["function"]
        tools = [
            {
                "name": f["name"],
                "description": f.get("description", ""),
                "parameters": to_json_schema(f.get("parameters", {})),
            }
            for f in functions
        ]
        if category != "irrelevance" and row["id"] not in answers:
            raise BfclError(f"{where}: no possible answer for {row['id']}")
        expect = {"bfcl": category, "functions": functions, "answer": answers.get(row["id"])}
        if category == "irrelevance":
            expect["abstain"] = True
        cases.append(Case(row["id"], CATEGORY_OF[category], question, tools, expect, {}, str(path)))
    return cases


def _lines(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BfclError(f"{path}: cannot read ({exc.strerror})") from exc
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((f"{path}:{n}", json.loads(line)))
            except ValueError as exc:
                raise BfclError(f"{path}:{n}: not JSON ({exc})") from exc
    return rows


Call = tuple[str, dict[str, Any]]


def bfcl_check(expect: dict[str, Any], calls: Sequence[Call]) -> tuple[bool, str]:
    """(right, why) for the calls a run made, by BFCL's rules for the case's category."""
    category, functions, answer = expect["bfcl"], expect["functions"], expect["answer"]
    if category == "irrelevance":
        return (not calls, "ok" if not calls else f"called {calls[0][0]} where no tool fits")
    if len(calls) != len(answer):
        return False, f"wrong number of calls: {len(calls)} for {len(answer)}"
    if category == "parallel":
        return _any_order(functions, calls, answer)
    name = next(iter(answer[0]))
    return _one(_describe(functions, name), calls[0], answer[0])


def _describe(functions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next((f for f in functions if f["name"] == name), functions[0])


def _any_order(
    functions: list[dict[str, Any]], calls: Sequence[Call], answer: list[dict[str, Any]]
) -> tuple[bool, str]:
    used: set[int] = set()
    for expected in answer:
        description = _describe(functions, next(iter(expected)))
        why = "no call left"
        for i, call in enumerate(calls):
            if i in used:
                continue
            ok, why = _one(description, call, expected)
            if ok:
                used.add(i)
                break
        else:
            return False, f"no call matches {next(iter(expected))}: {why}"
    return True, "ok"


def _one(description: dict[str, Any], call: Call, expected: dict[str, Any]) -> tuple[bool, str]:
    name, args = call
    accepted: dict[str, list[Any]] = expected[description["name"]]
    if name != description["name"]:
        return False, f"called {name}, expected {description['name']}"
    properties = description["parameters"].get("properties", {})
    for param in description["parameters"].get("required", []):
        if param not in args:
            return False, f"missing required {param}"
    for param, value in args.items():
        if param not in properties or param not in accepted:
            return False, f"unexpected parameter {param}"
        ok, why = _value(param, value, properties[param], accepted[param])
        if not ok:
            return False, why
    for param, values in accepted.items():
        if param not in args and "" not in values:
            return False, f"left out {param}, which is not optional"
    return True, "ok"


def _value(param: str, value: Any, schema: dict[str, Any], accepted: list[Any]) -> tuple[bool, str]:
    declared = schema.get("type", "any")
    expected_type = _PY_TYPES.get(declared, str)
    nested = (
        _PY_TYPES.get(schema.get("items", {}).get("type", "any")) if declared in _NESTED else None
    )
    if declared == "tuple" and isinstance(value, tuple):
        value = list(value)
    if declared == "float" and type(value) is int:
        value = float(value)
    ok, variable = _type_ok(value, accepted, expected_type, nested)
    if not ok:
        return False, f"{param}: wrong type {type(value).__name__} for {declared}"
    if not variable:
        if expected_type is dict:
            return _dict_ok(param, value, accepted)
        if expected_type is list and nested is dict:
            return _list_of_dicts_ok(param, value, accepted)
        if expected_type is str:
            good = standardize(value) in [standardize(a) for a in accepted if isinstance(a, str)]
            return good, "ok" if good else f"{param}: {value!r} is not one of {accepted}"
        if expected_type is list:
            # "" (optional) compares as an empty list, as BFCL's checker has it
            options = [_std_list(a) if isinstance(a, list) else [] for a in accepted]
            good = _std_list(value) in options
            return good, "ok" if good else f"{param}: {value!r} is not one of {accepted}"
    good = value in accepted
    return good, "ok" if good else f"{param}: {value!r} is not one of {accepted}"


def _answer_type(accepted: list[Any]) -> type | None:
    return next((type(a) for a in accepted if a != ""), None)


def _type_ok(
    value: Any, accepted: list[Any], expected: type, nested: type | None
) -> tuple[bool, bool]:
    """(type is right, the value is a variable: given in the accepted values' own type)."""
    seq: Any = value
    answer_type = _answer_type(accepted)
    variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, variable
        for option in accepted:  # an option that is not a list ("") does not constrain items
            if not isinstance(option, list) or all(
                _type_ok(item, option, nested, None)[0] for item in seq
            ):
                return True, variable
        return False, False
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, False


def standardize(text: str) -> str:
    """BFCL's string comparison: no spaces or ``,./-_*^``, lower case, ``'`` as ``"``."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _std_list(items: list[Any]) -> list[Any]:
    return [standardize(x) if isinstance(x, str) else x for x in items]


def _dict_ok(param: str, value: dict[str, Any], accepted: list[Any]) -> tuple[bool, str]:
    why = f"{param}: no accepted dict matches {value!r}"
    for option in accepted:
        if option == "":
            continue
        if any(k not in option for k in value):
            why = f"{param}: unexpected key in {value!r}"
            continue
        same = all(
            (standardize(v) if isinstance(v, str) else v)
            in [standardize(a) if isinstance(a, str) else a for a in option[k]]
            for k, v in value.items()
        )
        missing = any(k not in value and "" not in option[k] for k in option)
        if same and not missing:
            return True, "ok"
    return False, why


def _list_of_dicts_ok(param: str, value: list[Any], accepted: list[Any]) -> tuple[bool, str]:
    for option in accepted:
        if not isinstance(option, list) or len(option) != len(value):
            continue
        if all(
            isinstance(v, dict) and _dict_ok(param, v, [o])[0]
            for v, o in zip(value, option, strict=True)
        ):
            return True, "ok"
    return False, f"{param}: no accepted list of dicts matches {value!r}"
