"""Which model answers (L1–L4): complexity scorer, heuristic and learned routers, reward."""

from __future__ import annotations

from lar.routing.base import Decision, RouteContext, RouterPolicy, RouterRegistry

__all__ = ["Decision", "RouteContext", "RouterPolicy", "RouterRegistry"]
