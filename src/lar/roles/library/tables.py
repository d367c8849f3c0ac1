"""Reading the domain expert's tables (YAML): clause rules, log patterns. A table that cannot be
used raises TableError naming the file and the entry at fault."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from lar.errors import LarError

__all__ = ["TableError", "load_table", "compile_patterns"]


class TableError(LarError):
    pass


def _read(path: Path, mtime: float) -> Any:
    del mtime  # part of the cache key: an edited table is read again
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TableError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise TableError(f"{path}: not valid YAML ({exc})") from None


_cached = lru_cache(maxsize=64)(_read)


def load_table(source: Any, key: str) -> tuple[str, dict[str, Any]]:
    """(where, table) from a path to a YAML file or a mapping given inline."""
    if isinstance(source, dict):
        table, where = source, "(inline table)"
    else:
        path = Path(str(source)).expanduser()
        try:
            mtime = path.stat().st_mtime
        except OSError as exc:
            raise TableError(f"{path}: cannot read it ({exc.strerror or exc})") from None
        table, where = _cached(path, mtime), str(path)
    if not isinstance(table, dict) or not isinstance(table.get(key), list):
        raise TableError(f"{where}: expected a mapping with a `{key}:` list")
    return where, table


def compile_patterns(where: str, entry_id: str, patterns: Any) -> list[re.Pattern[str]]:
    if patterns is None:
        return []
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list):
        raise TableError(f"{where}: {entry_id}: patterns must be a list of regular expressions")
    out = []
    for p in patterns:
        try:
            out.append(re.compile(str(p), re.IGNORECASE))
        except re.error as exc:
            raise TableError(f"{where}: {entry_id}: bad pattern {p!r} ({exc})") from None
    return out
