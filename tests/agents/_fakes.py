"""Tools and replies shared by the scripted-engine tests of this folder."""

from __future__ import annotations

import json

from lar import tool


def call(name: str, **args: object) -> str:
    """A protocol-track reply that is one call."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


@tool
def calculate(expression: str) -> str:
    """Work out arithmetic.

    Args:
        expression: The arithmetic.
    """
    return f"{expression} = 50.5"


@tool
def read_numbers(which: str) -> str:
    """Read a list of numbers.

    Args:
        which: Which list.
    """
    return "12.5\n7.25\n30\n0.75"
