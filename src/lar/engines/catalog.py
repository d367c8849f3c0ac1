"""Model catalog (E5): what Lar knows about a model before calling it.

Parameters (billions), context length, price per million tokens, whether it fills the API's
``tool_calls`` reliably, capability tags (``code``, ``math``, ``reasoning``, ``thinking``) and
whether it runs on this machine or a network away. The router reads it to pick a model (L2), the
telemetry to price a call (O1). A configured model is described by its catalog entry (matched by
name, served model, bundled package or GGUF file name) with the config's ``catalog:`` keys on top.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    from lar.config import ModelConfig

__all__ = ["ModelInfo", "CATALOG", "lookup", "describe", "is_local_url"]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    name: str
    params_b: float | None
    """Parameters in billions; None when unknown (never picked as smallest or largest)."""
    context_length: int | None
    native_tools: bool
    """Whether the model reliably fills the API's ``tool_calls``; decides the default track."""
    tags: frozenset[str] = field(default_factory=frozenset)
    price_in_per_m: float = 0.0
    """US dollars per million prompt tokens (0 for local models: energy is their cost)."""
    price_out_per_m: float = 0.0
    local: bool = True
    """Runs on this machine or the local network; a cloud model is routed to only when allowed."""
    policies: tuple[str, ...] | None = None
    """The model's profile: which policies (lar.agents.policies) its replies get; None: all."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.price_in_per_m + completion_tokens * self.price_out_per_m
        ) / 1e6


CATALOG: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        # Measured: with llama.cpp's chat template these write the call as JSON text, so the
        # protocol track (with its parser) is their default.
        ModelInfo("qwen2.5-coder-1.5b-instruct", 1.5, 32768, False, frozenset({"code"})),
        ModelInfo("qwen2.5-coder-0.5b-instruct", 0.5, 32768, False, frozenset({"code"})),
    )
}

_QUANT = re.compile(r"[-.](q\d(_[a-z0-9]+)*|f16|f32|bf16|iq\d\w*)$", re.I)


def lookup(name: str) -> ModelInfo | None:
    return CATALOG.get(name) or CATALOG.get(_QUANT.sub("", name.lower()))


def is_local_url(url: str) -> bool:
    """Loopback, private-network and ``.local`` hosts count as local; anything else is cloud."""
    host = urlparse(url).hostname or ""
    if host == "localhost" or host.endswith((".local", ".localhost")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def describe(cfg: ModelConfig) -> ModelInfo:
    """The catalog's entry for a configured model, overridden by its ``catalog:`` keys."""
    from lar.engines.default_model import DEFAULT_MODEL

    keys = [cfg.name, cfg.model or ""]
    if cfg.engine == "llamacpp":
        keys.append(cfg.path.rsplit("/", 1)[-1].removesuffix(".gguf") if cfg.path else "")
        keys.append("" if cfg.path else cfg.package or DEFAULT_MODEL.name)
    base = next((info for k in keys if k and (info := lookup(k)) is not None), None)
    local = cfg.engine == "llamacpp" or (cfg.base_url is not None and is_local_url(cfg.base_url))
    if base is None:
        base = ModelInfo(cfg.name, None, None, cfg.engine != "llamacpp", local=local)
    info = dataclasses.replace(base, name=cfg.name, local=local)
    over = cfg.catalog
    if over is None:
        return info
    changes = {k: v for k, v in over.model_dump(exclude_none=True).items()}
    if "tags" in changes:
        changes["tags"] = frozenset(changes["tags"])
    if "policies" in changes:
        changes["policies"] = tuple(changes["policies"])
    return dataclasses.replace(info, **changes)
