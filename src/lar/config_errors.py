"""Where a config error is (the YAML node of a pydantic error location) and what it says.

Used by ``lar.config`` to name the file, line and key of a bad value.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import BaseModel

__all__ = ["node_for", "model_at", "describe"]


def node_for(root: yaml.Node | None, loc: tuple[Any, ...]) -> yaml.Node | None:
    """The YAML node at a pydantic error location (for its line number)."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for key, value in node.value:
                if key.value == str(part):
                    nxt = value if part != loc[-1] else key
                    break
            if nxt is None:
                return node
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return node
            node = node.value[part]
        else:
            return node
    return node


def model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The settings model at an error location (lists and dicts of models seen through)."""
    model: Any = root
    keyed = False
    for part in loc:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        annotation = field.annotation
        args = typing.get_args(annotation)
        origin = typing.get_origin(annotation)
        keyed = origin is dict
        model = args[-1] if origin in (list, dict) and args else annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def describe(root: type[BaseModel], err: Mapping[str, Any]) -> str:
    """One validation error in words; unknown keys list the allowed ones."""
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        parent = model_at(root, loc[:-1])
        allowed = [n for n, f in (parent.model_fields.items() if parent else []) if not f.exclude]
        return f"unknown key {loc[-1]!r}; allowed keys: {', '.join(allowed)}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] in ("missing",):
        return "required key is missing"
    value = err.get("input")
    if err["type"] not in ("model_type", "dict_type") and not isinstance(value, dict | list):
        msg += f" (got {value!r})"
    return msg
