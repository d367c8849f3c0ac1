"""Memory (M1–M9): the long-term store in lar.db, embeddings, hybrid recall."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

if TYPE_CHECKING:
    from collections.abc import Callable

    from lar.config import LarConfig
    from lar.memory.agent_memory import AgentMemory
    from lar.memory.archive import parse_when, read_records
    from lar.memory.consolidate import due_sessions
    from lar.memory.embed import Embedder, EmbedderMissing, minilm_dir
    from lar.memory.policy import Statement, statement
    from lar.memory.recall import why_nothing
    from lar.memory.store import RETENTION_DAYS, MemoryStore, NewMemory

__all__ = [
    "open_store",
    "open_memory",
    "open_embedder",
    "AgentMemory",
    "NewMemory",
    "RETENTION_DAYS",
    "EmbedderMissing",
    "minilm_dir",
    "due_sessions",
    "Statement",
    "statement",
    "parse_when",
    "read_records",
    "why_nothing",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AgentMemory": "lar.memory.agent_memory",
        "NewMemory": "lar.memory.store",
        "RETENTION_DAYS": "lar.memory.store",
        "EmbedderMissing": "lar.memory.embed",
        "minilm_dir": "lar.memory.embed",
        "due_sessions": "lar.memory.consolidate",
        "Statement": "lar.memory.policy",
        "statement": "lar.memory.policy",
        "parse_when": "lar.memory.archive",
        "read_records": "lar.memory.archive",
        "why_nothing": "lar.memory.recall",
    },
)


def open_memory(
    config: LarConfig, *, skill_lines: Callable[[], list[str]] | None = None
) -> AgentMemory:
    """The agent's memory: the store, the L0–L4 files (user edits imported) and the settings.
    ``skill_lines``: the installed skills, listed in L3 (lar.skills)."""
    from lar.memory.agent_memory import AgentMemory
    from lar.memory.files import MemoryFiles

    store = open_store(config)
    return AgentMemory(
        store,
        k=config.memory.recall_k,
        threshold=config.memory.threshold,
        files=MemoryFiles(store, config.home / "memory", skill_lines),
    )


def open_embedder(config: LarConfig, *, warn: str | None = None) -> Embedder | None:
    """The configured embedder; None when it is switched off or not installed (then ``warn``,
    if given, is printed with the reason: what is off without it)."""
    from lar.memory.embed import EmbedderMissing, build_embedder

    if not config.memory.embedder:
        return None
    try:
        return build_embedder(config.memory.embedder, config.home)
    except EmbedderMissing as exc:
        if warn:
            print(f"warning: {warn}: {exc}", file=sys.stderr)
        return None


def open_store(config: LarConfig, *, warn: bool = True) -> MemoryStore:
    """The store under ``$LAR_HOME`` with the configured embedder (BM25 only if it is missing)."""
    from lar.memory.store import MemoryStore

    embedder = open_embedder(config, warn="recall by meaning is off" if warn else None)
    return MemoryStore(
        config.home / "lar.db",
        embedder,
        index_dir=config.home / "index",
        retention=config.memory.retention_days,
    )
