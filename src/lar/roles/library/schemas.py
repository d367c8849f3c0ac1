"""Small helpers for the built-in capabilities' JSON Schemas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lar.roles.capability import Capability, Probe
from lar.roles.contracts import ToolImpl

__all__ = ["STR", "INT", "obj", "capability"]

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}


def obj(props: dict[str, Any]) -> dict[str, Any]:
    """An object schema whose every property is required."""
    return {"type": "object", "properties": props, "required": list(props)}


Spec = tuple[str, Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any], dict[str, Any]]


def capability(name: str, version: str, tools: list[Spec], probe: Probe) -> Capability:
    """A built-in capability from (tool name, function, input schema, output schema) rows."""
    return Capability(
        name=name,
        version=version,
        tools={
            tool: ToolImpl(tool, fn, inp, out, capability=name, version=version)
            for tool, fn, inp, out in tools
        },
        probe=probe,
    )
