"""Which model answers (L1–L4): complexity scorer, heuristic and learned routers, reward."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports
from lar.routing.base import Decision, RouteContext, RouterPolicy, RouterRegistry

__all__ = ["Decision", "RouteContext", "RouterPolicy", "RouterRegistry", "PolicyStore", "train"]

__getattr__, __dir__ = lazy_exports(
    __name__, {"PolicyStore": "lar.routing.learned", "train": "lar.routing.learned"}
)

if TYPE_CHECKING:
    from lar.routing.learned import PolicyStore, train
