"""Writes a benchmark's table into BENCHMARKS.md between ``<!-- NAME:start -->`` markers."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_section(name: str, table: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"{start}\n{table}\n{end}"
    if start in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)
