"""The policy about questions over a table file of the workspace: tried without code (a
keyword search, ``calculate`` over a column, a total worked out in the model's head), it is asked
once for Python over the file, shown the file's columns and first rows (lar.agents.policies
registers the rest)."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from lar.agents.answer_policies import _PATHLIKE, CALCULATOR, files_named
from lar.agents.answers import invented_figures
from lar.agents.policy import ACCEPT, Policy, Retry, Turn, Verdict, builtin
from lar.types import Code

if TYPE_CHECKING:
    from lar.tools.base import Tool

__all__ = ["TableByCode", "table_shape"]


@builtin
class TableByCode(Policy):
    name: ClassVar[str] = "table_by_code"
    tracks: ClassVar[frozenset[str]] = frozenset({"protocol", "constrained"})
    about: ClassVar[str] = (
        "a question about a table file of the workspace (CSV, TSV, a JSON list of records) "
        "that the first calls, or an answer with a figure no one gave, try without code: asked "
        "once for Python over the file, shown its columns (a code tool must be offered)"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        """First calls that compute or search over a table (``calculate`` on a column, a read
        with a keyword): code does the filtering and sums a small model slips on. A plain read
        is left alone (an edit or "show me" starts with one; a figure worked out from it is
        caught at the answer), and so is any call that changes something."""
        if turn.run.completed or not turn.calls:
            return ACCEPT
        tools = [turn.tools.get(c.name) for c in turn.calls]
        if not all(t is not None and t.harmless and not _codes(t) for t in tools):
            return ACCEPT
        if not any(c.name == CALCULATOR or _searches(c.arguments) for c in turn.calls):
            return ACCEPT
        return self._by_code(turn)

    async def before_answer(self, turn: Turn) -> Verdict:
        """An answer about a table with a figure that neither the request nor a result holds
        (a total worked out from lines a search showed), when no code ran."""
        ran = [turn.tools.get(r.name) for r in turn.run.completed.values()]
        if any(t is not None and _codes(t) for t in ran):
            return ACCEPT
        sent = [m.content for m in turn.request if m.content]
        if not invented_figures(turn.text, [turn.grounding(), *sent]):
            return ACCEPT
        return self._by_code(turn)

    def _by_code(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn) or turn.workspace is None:
            return ACCEPT
        coder = next((n for n in _CODERS if n in turn.tools), None)
        request = next(iter(turn.requests(1)), "")
        if coder is None:
            return ACCEPT
        shapes = (table_shape(turn.workspace, n) for n in files_named(request, turn.workspace))
        tables = [t for t in shapes if t is not None]
        if not tables:
            return ACCEPT
        name, rows, columns, first = tables[0]
        used = " ".join(json.dumps(c.arguments, ensure_ascii=False) for c in turn.calls)
        if turn.calls and Path(name).name not in used:
            return ACCEPT  # the calls are about something else (a folder, another file)
        shown = ", ".join(columns[:12])
        return Retry(
            Code.TABLE_BY_CODE,
            f"{name} is a table ({rows} rows) and no code read it",
            nudge=(
                f"{name} is a table of {rows} rows with the columns {shown}; its first rows:\n"
                + "\n".join(first)
                + "\nCompute the answer with Python over it (pandas is there), printing the "
                "values asked for. Reply with only this call:\n<tool_call>\n"
                f'{{"name": "{coder}", "arguments": {{"code": "..."}}}}\n</tool_call>'
            ),
        )


_CODERS = ("code_read", "code_run")
"""The built-in tools that run Python over the workspace, the read-only one first
(lar.tools.builtin.code): both change nothing unasked."""


def _codes(tool: Tool) -> bool:
    return tool.name in _CODERS or tool.stages


def _searches(arguments: Mapping[str, Any]) -> bool:
    """A call that looks for something in a file (a keyword, a pattern) rather than reading
    it: more than one of its text arguments is set, or its only one is not a file name."""
    texts = [v for v in arguments.values() if isinstance(v, str) and v.strip()]
    return len(texts) > 1 or (len(texts) == 1 and not _PATHLIKE.fullmatch(texts[0].strip()))


_TABLE_SEPARATORS = ",;\t|"


def table_shape(workspace: Path, name: str) -> tuple[str, int, list[str], list[str]] | None:
    """``(name, rows, columns, first rows)`` when the workspace file ``name`` holds a table:
    lines of delimited fields under a header of distinct, non-empty, not only numeric names
    (the same number of fields, two or more, on each of its first lines) or a JSON list of
    records; None otherwise, and for a file outside the workspace. Judged from the content,
    not the file's suffix."""
    path = (workspace / name).resolve()
    try:
        if not path.is_relative_to(workspace.resolve()) or not path.is_file():
            return None
        with path.open(encoding="utf-8-sig", errors="replace") as f:
            text = f.read(_TABLE_PEEK)
            if text.lstrip().startswith("["):
                text += f.read(_JSON_PEEK - _TABLE_PEEK)
    except OSError:
        return None
    if text.lstrip().startswith("["):
        return _records(name, text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(text) == _TABLE_PEEK:
        lines = lines[:-1]  # the last line read may be cut
    if len(lines) < 3:
        return None
    for sep in _TABLE_SEPARATORS:
        try:
            rows = list(csv.reader(lines[:6], delimiter=sep))
        except csv.Error:
            continue
        widths = {len(row) for row in rows}
        columns = [c.strip() for c in rows[0]]
        if len(widths) == 1 and len(columns) >= 2 and _header(columns):
            first = [_clip(ln) for ln in lines[1:3]]
            return name, _row_count(path), columns, first
    return None


def _header(columns: list[str]) -> bool:
    """Column names: none empty, no two alike, not all of them numbers."""
    numeric = all(re.fullmatch(r"[-+\d.,\s%]+", c) for c in columns)
    return all(columns) and len(set(columns)) == len(columns) and not numeric


def _records(name: str, text: str) -> tuple[str, int, list[str], list[str]] | None:
    try:
        records = json.loads(text)
    except (ValueError, RecursionError):
        return None  # cut at the peek's end, or not JSON
    if not isinstance(records, list) or not records:
        return None
    if not all(isinstance(r, dict) for r in records):
        return None
    keys = list(dict.fromkeys(str(k) for r in records for k in r))
    first = [_clip(json.dumps(r, ensure_ascii=False)) for r in records[:2]]
    return (name, len(records), keys, first) if keys else None


_TABLE_PEEK = 4096
_JSON_PEEK = 1 << 20
"""A JSON list is read whole up to 1 MiB (a cut one cannot be parsed); a delimited file only
for its first lines."""
_COUNT_CAP = 64 << 20


def _clip(line: str, width: int = 120) -> str:
    line = line.strip()
    return line if len(line) <= width else line[: width - 1] + "…"


def _row_count(path: Path) -> int:
    """Data rows (lines but the header), counted over the first 64 MiB at most."""
    lines = seen = 0
    with path.open("rb") as f:
        for line in f:
            seen += len(line)
            lines += bool(line.strip())
            if seen > _COUNT_CAP:
                break
    return max(0, lines - 1)
