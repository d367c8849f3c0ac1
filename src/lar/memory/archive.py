"""Dated records from outside Lar (a chat export, notes, another tool's memory) as memories.

``lar memory import FILE`` reads, besides Lar's own exports, one JSON object per line (or a
JSON list of them)::

    {"text": "I went to a support group yesterday.", "speaker": "Caroline",
     "at": "2023-05-08 13:56", "session": "chat 1"}

``text`` (or ``content``) is required; ``at`` (or ``created``/``date``) is a date, a date and
time (ISO 8601, local time) or seconds since 1970 — the memory keeps it as the time it was
said; ``speaker`` makes the memory ``"Speaker: text"``, said by that speaker; ``type`` defaults
to ``episode`` for what someone said and ``fact`` otherwise. Within one ``session``, a line
with a speaker is indexed together with the line before it (the turn it answers), so that a
reply is found by the words of the question it answers. The whole file is checked before
anything is stored.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from lar.errors import LarError
from lar.memory.store import RETENTION_DAYS, MemoryType, NewMemory

__all__ = ["ArchiveError", "parse_when", "read_records"]


class ArchiveError(LarError):
    pass


def parse_when(value: object) -> float:
    """A date (``2023-05-07``), date and time (``2023-05-07 14:30``, ``…T14:30:00``) or
    seconds since 1970, as a timestamp (local time). Raises ValueError naming the value."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a date")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date: write 2023-05-07, 2023-05-07 14:30 or seconds since 1970"
        ) from None


def _field(row: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in row:
            return row[name]
    return None


def read_records(path: Path, *, source: str | None = None) -> list[NewMemory]:
    """The memories a record file holds, in order; an error names the file, line and key."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"{path}: cannot read: {exc}") from None
    rows: list[tuple[int, Any]] = []
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            rows = [(n, row) for n, row in enumerate(json.loads(text), 1)]
        except json.JSONDecodeError as exc:
            raise ArchiveError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        where = "item"
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ArchiveError(
                    f"{path}:{n}: invalid JSON: {exc.msg} (column {exc.colno})"
                ) from None
        where = "line"
    if not rows:
        raise ArchiveError(f"{path} holds no records")
    origin = (source or f"import:{path.name}")[:200]
    items: list[NewMemory] = []
    last: dict[str, str] = {}  # session → the content of its latest line
    for n, row in rows:
        item = _record(row, f"{path}: {where} {n}", origin)
        if item.speaker:  # a conversation: each line answers the one before it in its session
            item.context = last.get(item.session_id, "")
            last[item.session_id] = item.content
        items.append(item)
    return items


def _record(row: object, at: str, origin: str) -> NewMemory:
    if not isinstance(row, dict):
        raise ArchiveError(f"{at}: expected an object with 'text', got {row!r:.60}")
    body = _field(row, "text", "content")
    if not isinstance(body, str) or not body.strip():
        raise ArchiveError(f"{at}: 'text' must be a non-empty string")
    speaker = row.get("speaker") or ""
    if not isinstance(speaker, str):
        raise ArchiveError(f"{at}: 'speaker' must be a string")
    speaker = speaker.strip()
    kind = row.get("type") or ("episode" if speaker else "fact")
    if kind not in RETENTION_DAYS:
        raise ArchiveError(f"{at}: unknown type {kind!r}; allowed: {', '.join(RETENTION_DAYS)}")
    when = _field(row, "at", "created", "date")
    created = None
    if when is not None:
        try:
            created = parse_when(when)
        except ValueError as exc:
            raise ArchiveError(f"{at}: 'at': {exc}") from None
    content = f"{speaker}: {body.strip()}" if speaker else body.strip()
    return NewMemory(
        content,
        cast("MemoryType", kind),
        origin,
        1.0,
        created,
        str(row.get("session", "")),
        speaker=speaker,
    )
