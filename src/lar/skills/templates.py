"""Step arguments as jinja2 templates, rendered in jinja2's sandboxed environment (K2).

A skill comes from outside, so its templates are untrusted: the sandbox refuses attribute access
to internals (``__class__``, ``mro`` …) and undefined names raise instead of rendering empty.
A value that is a single placeholder (``"{{ total }}"``) keeps its type (a number stays a number,
a list a list); anything else renders to text.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, meta
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from lar.skills.manifest import SkillError

__all__ = ["placeholders", "render_arguments", "template_problem"]

_ONLY_VAR = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


@lru_cache(maxsize=1)
def _env() -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


def _strings(arguments: Any) -> list[str]:
    if isinstance(arguments, str):
        return [arguments]
    if isinstance(arguments, dict):
        return [s for v in arguments.values() for s in _strings(v)]
    if isinstance(arguments, list):
        return [s for v in arguments for s in _strings(v)]
    return []


def template_problem(arguments: Any) -> str | None:
    """Why ``arguments`` cannot be rendered (a syntax error), or None."""
    for text in _strings(arguments):
        try:
            _env().parse(text)
        except TemplateSyntaxError as exc:
            return f"template {text!r}: {exc.message}"
    return None


def placeholders(arguments: Any) -> set[str]:
    """The names a template reads that it does not define itself."""
    names: set[str] = set()
    for text in _strings(arguments):
        names |= meta.find_undeclared_variables(_env().parse(text))
    return names


def render_arguments(arguments: Any, values: dict[str, Any]) -> dict[str, Any]:
    """The arguments for one step call, given the skill's inputs and earlier outputs."""
    try:
        if isinstance(arguments, str):
            text = _env().from_string(arguments).render(values)
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as exc:
                raise SkillError(f"arguments template rendered {text!r}, not JSON: {exc}") from None
            if not isinstance(parsed, dict):
                raise SkillError(f"arguments template rendered {text!r}, not a JSON object")
            return parsed
        rendered = _render(arguments, values)
        return rendered if isinstance(rendered, dict) else {}
    except UndefinedError as exc:
        raise SkillError(
            f"a step's arguments need a value that is missing: {exc.message}"
        ) from None
    except SecurityError as exc:
        raise SkillError(f"a step's template was refused by the sandbox: {exc}") from None


def _render(value: Any, values: dict[str, Any]) -> Any:
    if isinstance(value, str):
        only = _ONLY_VAR.match(value.strip())
        if only:
            name = only.group(1)
            if name not in values:
                raise UndefinedError(f"'{name}' is undefined")
            return values[name]
        return _env().from_string(value).render(values)
    if isinstance(value, dict):
        return {k: _render(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, values) for v in value]
    return value
