"""The report (D8): the machine's structured result, phrased by the model or rendered plainly.

The model is given the result's fields as JSON and asked to restate them; it decides nothing.
What it writes is checked against the result before anyone sees it: each value the role says a
report must state is stated (the first mention of a field with fixed values is its actual value),
no fixed value appears that the result does not hold, and every number is one the result
contains. A report that fails is replaced by the plain rendering, and the reason is kept.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from lar.engines import Engine
from lar.roles.contracts import field_schema
from lar.roles.expr import MISSING
from lar.types import Message

if TYPE_CHECKING:
    from lar.roles.spec import RoleSpec

__all__ = [
    "Phrased",
    "plain",
    "check_report",
    "phrase",
    "enum_values",
    "report_for",
    "run_sync",
]

_T = TypeVar("_T")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_LIST_MARKER = re.compile(r"^(\s*)\d{1,2}[.)](?=\s)", re.MULTILINE)
_QUOTE = re.compile(r"[\"“”„«»]([^\"“”„«»\n]{3,200})[\"“”„«»]")


def run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion from synchronous code, also when the caller's thread already
    runs an event loop (a notebook, a server handler): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1, thread_name_prefix="lar-role-report") as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass(frozen=True, slots=True)
class Phrased:
    text: str
    source: str
    """``model``, ``plain`` (no model), or ``plain (model report replaced: …)``."""
    problems: list[str]


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _render(value: Any, indent: str = "  ") -> list[str]:
    if isinstance(value, list):
        if not value:
            return [f"{indent}(none)"]
        lines = []
        for item in value:
            if isinstance(item, Mapping):
                shown = [f"{k}: {_value_text(v)}" for k, v in item.items() if v not in ("", None)]
                lines.append(f"{indent}- " + "; ".join(shown))
            else:
                lines.append(f"{indent}- {_value_text(item)}")
        return lines
    return [f"{indent}{_value_text(value)}"]


def plain(header: str, fields: Mapping[str, Any], notes: list[str]) -> str:
    """The result as text, every field as it is."""
    lines = [header]
    for ref, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{ref}:")
            lines += _render(value)
        else:
            lines.append(f"{ref}: {_value_text(value)}")
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines)


def _leaves(value: Any) -> Iterator[Any]:
    """Every scalar inside ``value``, and each list's length (a count the report may state)."""
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        yield len(value)
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _number_texts(leaves: list[Any]) -> set[str]:
    out: set[str] = set()
    for leaf in leaves:
        if isinstance(leaf, bool):
            continue
        if isinstance(leaf, int | float):
            out.add(_value_text(leaf))
        elif isinstance(leaf, str):
            out.update(
                _value_text(float(n)) if "." in n else str(int(n)) for n in _NUMBER.findall(leaf)
            )
    return out


def enum_values(schemas: Mapping[str, Mapping[str, Any]], ref: str) -> list[str]:
    """The fixed values of a field (its contract's ``enum``), given the step → output schema map."""
    head, _, rest = ref.partition(".")
    schema = schemas.get(head)
    node = field_schema(schema, rest.split(".")) if schema and rest else None
    values = node.get("enum") if node else None
    return [str(v) for v in values] if isinstance(values, list) else []


def check_report(
    text: str,
    fields: Mapping[str, Any],
    must_state: list[str],
    enums: Mapping[str, list[str]],
) -> list[str]:
    """How ``text`` contradicts or leaves out the result (empty: it is faithful).

    Each ``must_state`` value is stated (a count of zero may be said in words, in any language);
    the first mention of a field with fixed values is its actual value, and no fixed value the
    result does not hold appears; every number is one the result contains (list numbering
    aside); every quotation is found in the result."""
    problems = []
    body = _LIST_MARKER.sub(r"\1", text)
    low = body.casefold()
    words_in_text = re.findall(r"\w+", low)
    leaves = list(_leaves(dict(fields)))
    source = " ".join(" ".join(str(leaf) for leaf in leaves).casefold().split())
    result_words = set(re.findall(r"\w+", source))
    for ref in must_state:
        value = fields.get(ref, MISSING)
        if value is MISSING or (isinstance(value, int | float) and value == 0):
            continue
        shown = _value_text(value).casefold()
        choices = [v.casefold() for v in enums.get(ref, [])]
        if choices:
            mentioned = [w for w in words_in_text if w in choices]
            if not mentioned:
                problems.append(f"does not state {ref} ({shown})")
            elif mentioned[0] != shown:
                problems.append(f"states {ref} as {mentioned[0]!r}; the result is {shown!r}")
        elif not re.search(rf"(?<!\w){re.escape(shown)}(?!\w)", low):
            problems.append(f"does not state {ref} ({shown})")
    for ref, choices in enums.items():
        for v in choices:
            v = v.casefold()
            if v in words_in_text and v not in result_words:
                problems.append(f"says {v!r}, which the result does not hold ({ref})")
    allowed = _number_texts(leaves)
    for n in _NUMBER.findall(body):
        normal = str(int(float(n))) if float(n).is_integer() else n
        if normal not in allowed:
            problems.append(f"states the number {n}, which is not in the result")
    for quoted in _QUOTE.findall(text):
        if " ".join(quoted.casefold().split()) not in source:
            problems.append(f"quotes {quoted!r}, which the result does not contain")
    return list(dict.fromkeys(problems))


async def phrase(
    engine: Engine,
    *,
    role_text: str,
    fields: Mapping[str, Any],
    must_state: list[str],
    enums: Mapping[str, list[str]],
    instructions: str,
    fallback: str,
    max_tokens: int = 480,
) -> Phrased:
    """The model's report when it is faithful to ``fields``, else ``fallback`` (see module)."""
    musts = "; ".join(
        f"{ref.rsplit('.', 1)[-1].replace('_', ' ')} = {_value_text(fields[ref])}"
        for ref in must_state
        if ref in fields
    )
    system = (
        "You turn the result of a finished check into a short report for a person. Use only the "
        "facts you are given; never add a fact, a quotation or a number, and never change one. "
        + (
            f"Your first sentence states these values exactly as written: {musts}. "
            if musts
            else ""
        )
        + "Then name the reasons in two or three sentences. Plain sentences: no headings, no "
        "lists, no quotation marks." + (f" {instructions}" if instructions else "")
    )
    facts = json.dumps(dict(fields), indent=1, ensure_ascii=False)
    user = f"Role: {role_text.strip()}\nResult:\n{facts}"
    try:
        response = await engine.generate(
            [Message("system", system), Message("user", user)],
            None,
            temperature=0.0,
            seed=0,
            max_tokens=max_tokens,
        )
    except Exception as exc:  # the plain report is always there to fall back on
        return Phrased(fallback, f"plain (the model failed: {type(exc).__name__})", [str(exc)])
    text = (response.content or "").strip()
    if response.finish_reason == "length":
        problems = [f"cut off at {max_tokens} tokens"]
    else:
        problems = check_report(text, fields, must_state, enums) if text else ["empty"]
    if problems:
        return Phrased(
            fallback, "plain (model report replaced: " + "; ".join(problems) + ")", problems
        )
    return Phrased(text, "model", [])


async def report_for(
    spec: RoleSpec,
    result: Mapping[str, Any],
    fields: Mapping[str, Any],
    notes: list[str],
    engine: Engine | None,
    step_schemas: Mapping[str, Mapping[str, Any]],
) -> Phrased:
    """A run's report: choices for an unclear request, else the plain rendering, phrased by
    ``engine`` when there is one and the run completed (``phrase``)."""
    header = f"{spec.name} {spec.version}: {result.get('final_state') or '-'} ({result['outcome']})"
    extra = [*result.get("degraded", []), *result.get("failed", []), *notes]
    if result["outcome"] == "unclear":
        lines = [header, "Not sure what you want. Did you mean:"]
        lines += [
            f"  {i}. {name}: {spec.intents[name].description or spec.intents[name].state}"
            for i, name in enumerate(result["choices"], 1)
        ]
        return Phrased("\n".join(lines), "plain", [])
    text = plain(header, fields, extra)
    if engine is None or result["outcome"] not in ("completed", "degraded") or not fields:
        return Phrased(text, "plain", [])
    enums = {ref: values for ref in fields if (values := enum_values(step_schemas, ref))}
    phrased = await phrase(
        engine,
        role_text=spec.role,
        fields=fields,
        must_state=spec.report.must_state,
        enums=enums,
        instructions=spec.report.instructions,
        fallback=text,
    )
    if phrased.source == "model" and extra:
        notes_text = "\n".join(f"note: {n}" for n in extra)
        return Phrased(f"{phrased.text}\n{notes_text}", "model", [])
    return phrased
