"""Package exports loaded on first use: a package's public names without its import cost.

    __getattr__, __dir__ = lazy_exports(__name__, {"build_engine": "lar.engines.factory"})

Faces (the CLI, and the server and panel to come) import only these package-level names, the
top-level modules and ``lar`` itself, never a module inside a package (an import-linter
contract in pyproject.toml).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``names`` comes from the
    module it maps to (``"module:attribute"`` where the names differ), imported when the name is
    first read (then cached on the package)."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*names, *vars(sys.modules[package])})

    return __getattr__, __dir__
