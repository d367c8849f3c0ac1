"""User tools from a directory (T1): every ``Tool`` defined at the top level of ``*.py`` files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from lar.errors import ToolDefinitionError
from lar.tools.base import Tool

__all__ = ["discover_tools"]


def discover_tools(directory: Path) -> list[Tool]:
    """Import each module in ``directory`` (sorted) and collect its tools.

    A module that fails to import raises ToolDefinitionError naming the file, rather than
    silently leaving its tools out.
    """
    if not directory.is_dir():
        return []
    found: list[Tool] = []
    for file in sorted(directory.glob("*.py")):
        if file.name.startswith("_"):
            continue
        name = f"lar_user_tools.{file.stem}"
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # any error in user code: report which file
            sys.modules.pop(name, None)
            raise ToolDefinitionError(
                f"{file}: cannot load tools: {type(exc).__name__}: {exc}"
            ) from exc
        found.extend(v for v in vars(module).values() if isinstance(v, Tool))
    return found
