"""Memory (M1–M9): the long-term store in lar.db, embeddings, hybrid recall."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lar.config import LarConfig
    from lar.memory.agent_memory import AgentMemory
    from lar.memory.store import MemoryStore

__all__ = ["open_store", "open_memory"]


def open_memory(config: LarConfig) -> AgentMemory:
    """The agent's memory: the store, the L0–L4 files (user edits imported) and the settings."""
    from lar.memory.agent_memory import AgentMemory
    from lar.memory.files import MemoryFiles

    store = open_store(config)
    return AgentMemory(
        store,
        k=config.memory.recall_k,
        threshold=config.memory.threshold,
        files=MemoryFiles(store, config.home / "memory"),
    )


def open_store(config: LarConfig, *, warn: bool = True) -> MemoryStore:
    """The store under ``$LAR_HOME`` with the configured embedder (BM25 only if it is missing)."""
    from lar.memory.embed import EmbedderMissing, build_embedder
    from lar.memory.store import MemoryStore

    embedder = None
    if config.memory.embedder:
        try:
            embedder = build_embedder(config.memory.embedder, config.home)
        except EmbedderMissing as exc:
            if warn:
                print(f"warning: recall by meaning is off: {exc}", file=sys.stderr)
    return MemoryStore(
        config.home / "lar.db",
        embedder,
        index_dir=config.home / "index",
        retention=config.memory.retention_days,
    )
