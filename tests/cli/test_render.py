"""The staged log lines (O5) for memory and context events."""

from __future__ import annotations

import io

from rich.console import Console

from lar.cli.render import StagedLog
from lar.types import ContextCompressed, MemoryRecalled, MemoryWritten


def lines(*events: object) -> list[str]:
    out = io.StringIO()
    log = StagedLog(console=Console(file=out, width=200, color_system=None))
    for e in events:
        log.handle(e)  # type: ignore[arg-type]
    return out.getvalue().splitlines()


def test_memory_and_context_lines() -> None:
    item = {"id": "m_1", "score": 0.0328, "cosine": 0.8213, "bm25_rank": 1}
    assert lines(
        MemoryRecalled("tea?", [item, {**item, "id": "m_2"}], 12.4),
        MemoryRecalled("x", [], 3.0),
        MemoryWritten("superseded", "I live in Porto.", "m_3", "m_2"),
        MemoryWritten("refused", "pid 4 runs", reason="holds a process id"),
        ContextCompressed("history", 1800, 420, "12 earlier rounds → progress line"),
    ) == [
        "recall: 2 memories, top 0.82 (m_1), 12ms",
        "recall: 0 memories, 3ms",
        "memory: superseded m_3 'I live in Porto.'",
        "memory: refused 'pid 4 runs': holds a process id",
        "context: history 1800 → 420 tokens (12 earlier rounds → progress line)",
    ]
