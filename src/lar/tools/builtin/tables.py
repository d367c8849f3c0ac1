"""What a table on a page adds up to, said once under it: its rows, and for each column of
figures the row with the lowest and the highest (``web_scan``). Asked which item on a price list
is the cheapest, the 1.5B named a wrong one in five of nine failed pages — comparing four to
nine figures is arithmetic, and tools do the arithmetic here (docs/evals.md).

A cell counts as a figure when it is one number with at most a currency or a short unit on
either side ("75,23 €", "US$24.73", "1.234,50 kr", "12 kg"); a column counts when every data
row's cell does.
Whether a comma or a point separates decimals is read from the column: a cell ending in a
separator and one or two digits names it; otherwise both separate thousands."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["table_summary"]

_UNIT = r"(?:[^\W\d_]{0,5}\.?[^\w\s]{0,3}|[^\w\s]{0,3}[^\W\d_]{0,5}\.?)"  # "US$", "€", "kg"
_ONE_NUMBER = re.compile(rf"{_UNIT}\s*(-?\d[\d.,\s\u00a0\u202f']*\d|-?\d)\s*{_UNIT}")
_MAX_COLUMNS = 3  # a wide table of figures gets a line for its first three columns only


def _digits(cell: str) -> str | None:
    found = _ONE_NUMBER.fullmatch(cell.strip())
    return re.sub(r"[\s\u00a0\u202f']", "", found.group(1)) if found else None


def _decimal_mark(texts: list[str]) -> str | None:
    """The column's decimal separator: the one a cell ends with before one or two digits."""
    for mark in (",", "."):
        if any(re.search(rf"\{mark}\d{{1,2}}$", t) for t in texts):
            return mark
    return None


def _value(text: str, mark: str | None) -> Decimal | None:
    other = {",": ".", ".": ","}.get(mark or "", "")
    plain = text.replace(other, "") if mark else text.replace(",", "").replace(".", "")
    try:
        return Decimal(plain.replace(",", ".") if mark == "," else plain)
    except InvalidOperation:
        return None


def table_summary(rows: list[list[str]], header: list[str] | None = None) -> list[str]:
    """For each column of figures (after the first, which names the rows): "lowest NAME:
    ROW (CELL); highest NAME: ROW (CELL)", ties naming every row. ``rows`` are the data rows'
    cells; empty when no column qualifies or fewer than two rows do."""
    if len(rows) < 2 or any(len(r) < 2 or not r[0].strip() for r in rows):
        return []
    if any(re.fullmatch(r"[\d\s.,:/-]+", r[0]) for r in rows):
        return []  # the first column is no name: a row would be told by a figure
    lines: list[str] = []
    for col in range(1, min(len(r) for r in rows)):
        texts = [_digits(r[col]) for r in rows]
        if any(t is None for t in texts):
            continue
        known = [t for t in texts if t is not None]
        mark = _decimal_mark(known)
        values = [_value(t, mark) for t in known]
        if any(v is None for v in values):
            continue
        name = (
            header[col].strip()
            if header and len(header) > col and header[col].strip()
            else (f"column {col + 1}")
        )
        said = []
        for word, pick in (("lowest", min), ("highest", max)):
            best = pick(v for v in values if v is not None)
            at = [r for r, v in zip(rows, values, strict=True) if v == best]
            shown = ", ".join(f"{r[0].strip()} ({r[col].strip()})" for r in at)
            said.append(f"{word} {name}: {shown}")
        lines.append("; ".join(said))
        if len(lines) == _MAX_COLUMNS:
            break
    return lines
