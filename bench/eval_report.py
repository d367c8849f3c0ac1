"""Markdown tables from ``lar eval --json`` result files (what docs/evals.md reports).

    python bench/eval_report.py evals/results/test-*.jsonl [--variant -off_topic]

One row per file and slice: cases, accuracy, right abstentions, calls a policy refused in cases
that need one ("refused fitting"), tokens and seconds per case. Slices: each category; for the
frozen test set, English and non-English (by case id); for BFCL, each file (by case id). The
newest row of a case counts, as with ``--resume``; rows of an ablation (``variant``) are left
out unless ``--variant`` names it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_BFCL = re.compile(r"^(simple_python|live_simple|multiple|parallel|irrelevance)_")


def rows(path: Path, variant: str = "") -> list[dict[str, Any]]:
    newest: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("variant", "") == variant:
                newest[row["id"]] = row
    return [r for r in newest.values() if not r.get("error")]


def slice_of(row: dict[str, Any]) -> list[str]:
    found = _BFCL.match(row["id"])
    if found:
        return [found.group(1)]
    slices = [row["category"]]
    if row["id"].startswith("en-"):
        slices.append("English")
    elif re.match(r"^(pt|es|fr|de|zh)-", row["id"]):
        slices.append("non-English")
    return slices


def summary(name: str, rs: list[dict[str, Any]]) -> str:
    n = len(rs)
    ok = sum(r["ok"] for r in rs)
    abstain = [r for r in rs if r["category"] == "abstain"]
    right = sum(1 for r in abstain if not r["calls"])
    fitting = sum(1 for r in rs if r.get("refused") and r["category"] != "abstain")
    tokens = sum(r["tokens"] for r in rs) / n
    seconds = sum(r["latency_ms"] for r in rs) / n / 1000
    abst = f"{right}/{len(abstain)}" if abstain else ""
    cells = [name, n, f"{ok} ({ok / n:.1%})", abst, fitting, f"{tokens:.0f}", f"{seconds:.1f}"]
    return "| " + " | ".join(map(str, cells)) + " |"


def table(path: Path, variant: str) -> Iterable[str]:
    rs = rows(path, variant)
    if not rs:
        return
    yield f"\n`{path}`" + (f" (variant {variant})" if variant else "") + "\n"
    yield "| slice | cases | right | abstained right | refused fitting | tokens/case | s/case |"
    yield "|---|---:|---:|---:|---:|---:|---:|"
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        for s in slice_of(r):
            groups.setdefault(s, []).append(r)
    for name in sorted(groups):
        yield summary(name, groups[name])
    yield summary("**all**", rs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--variant", default="", help="an ablation's rows, e.g. -off_topic")
    args = parser.parse_args()
    for path in args.files:
        for line in table(path, args.variant):
            print(line)


if __name__ == "__main__":
    main()
