"""The router the config asks for (``router:``), over the models it may pick."""

from __future__ import annotations

from lar.config import LarConfig
from lar.engines.catalog import ModelInfo, describe
from lar.routing.base import RouterPolicy, RouterRegistry
from lar.routing.heuristic import HeuristicRouter
from lar.routing.learned import LearnedRouter, PolicyStore

__all__ = ["make_router", "candidates"]


def candidates(config: LarConfig) -> list[ModelInfo]:
    """The configured models the router may pick: local ones, cloud ones only when
    ``router.allow_cloud`` (the default model is the user's own choice, so always allowed)."""
    infos = [describe(config.model_named(n)) for n in config.candidates()]
    return [i for i in infos if i.local or config.router.allow_cloud or i.name == config.model]


def make_router(config: LarConfig) -> RouterPolicy | None:
    """None for ``policy: fixed`` (every request goes to ``model``)."""
    policy = config.router.policy
    if policy == "fixed":
        return None
    models = candidates(config)
    if policy in ("auto", "learned"):
        table = {}
        if (config.home / "lar.db").exists():  # reading must not create the database
            store = PolicyStore(config.home / "lar.db")
            try:
                table = store.load()
            finally:
                store.close()
        if table or policy == "learned":
            return LearnedRouter(models, config.model, table, min_samples=config.router.min_samples)
        return HeuristicRouter(models, config.model)
    return RouterRegistry.get(policy)(models, config.model)
