"""Size limits of the shipped code (issue 17): small modules and a small loop."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "lar"


def test_no_module_in_src_is_over_500_lines() -> None:
    sizes = {p.relative_to(SRC): len(p.read_text().splitlines()) for p in SRC.rglob("*.py")}
    assert sizes and {str(p): n for p, n in sizes.items() if n > 500} == {}


def test_the_loop_function_is_at_most_150_lines() -> None:
    tree = ast.parse((SRC / "agents" / "loop.py").read_text())
    (loop,) = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "run_loop"]
    assert loop.end_lineno is not None and loop.end_lineno - loop.lineno + 1 <= 150
