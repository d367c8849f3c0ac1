"""Inference backends (E1–E5): the engine interface, llama.cpp, OpenAI-compatible HTTP, failover,
the model catalog and the bundled default model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

__all__ = [
    "Engine",
    "QueuedEngine",
    "queue_label",
    "build_engine",
    "serve",
    "describe",
    "DEFAULT_MODEL",
    "MODEL_PACKAGES",
    "model_path",
    "ensure_model",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Engine": "lar.engines.base",
        "QueuedEngine": "lar.engines.queue",
        "queue_label": "lar.engines.queue",
        "build_engine": "lar.engines.factory",
        "serve": "lar.engines.llamacpp",
        "describe": "lar.engines.catalog",
        "DEFAULT_MODEL": "lar.engines.default_model",
        "MODEL_PACKAGES": "lar.engines.default_model",
        "model_path": "lar.engines.default_model",
        "ensure_model": "lar.engines.default_model",
    },
)

if TYPE_CHECKING:
    from lar.engines.base import Engine
    from lar.engines.catalog import describe
    from lar.engines.default_model import DEFAULT_MODEL, MODEL_PACKAGES, ensure_model, model_path
    from lar.engines.factory import build_engine
    from lar.engines.llamacpp import serve
    from lar.engines.queue import QueuedEngine, queue_label
