"""Evaluation sets and their scoring: tool-calling suites, BFCL, memory recall, off-topic set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

__all__ = [
    "run_case",
    "summarize",
    "footprint",
    "default_suites",
    "load_suites",
    "SuiteError",
    "CaseResult",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "run_case": "lar.evals.toolcalls",
        "summarize": "lar.evals.toolcalls",
        "footprint": "lar.evals.toolcalls",
        "default_suites": "lar.evals.toolcalls",
        "load_suites": "lar.evals.toolcalls",
        "SuiteError": "lar.evals.toolcalls",
        "CaseResult": "lar.evals.toolcalls",
    },
)

if TYPE_CHECKING:
    from lar.evals.toolcalls import (
        CaseResult,
        SuiteError,
        default_suites,
        footprint,
        load_suites,
        run_case,
        summarize,
    )
