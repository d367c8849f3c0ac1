"""JSONL files read one way everywhere: every error names ``file:line``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lar.errors import LarError

__all__ = ["read_jsonl"]


def read_jsonl(
    path: Path, *, comments: bool = False, error: type[LarError] = LarError
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of ``path`` (lines starting with ``#``
    skipped too when ``comments``). The file is read at once, so an unreadable one raises
    ``error`` here; a line that is not JSON raises it while iterating, naming ``file:line`` and
    the column."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    return _rows(path, text, comments, error)


def _rows(
    path: Path, text: str, comments: bool, error: type[LarError]
) -> Iterator[tuple[int, Any]]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or (comments and line.lstrip().startswith("#")):
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{n}: invalid JSON: {exc.msg} (column {exc.colno})") from None
