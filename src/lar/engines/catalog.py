"""Model catalog (E5, first part): what Lar knows about a model before calling it."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ModelInfo", "CATALOG", "lookup"]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    name: str
    params_b: float
    context_length: int
    native_tools: bool
    """Whether the model reliably fills the API's ``tool_calls``; decides the default track."""
    tags: frozenset[str] = field(default_factory=frozenset)
    price_in_per_m: float = 0.0
    price_out_per_m: float = 0.0


CATALOG: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        # Measured: with llama.cpp's chat template these write the call as JSON text, so the
        # protocol track (with its parser) is their default.
        ModelInfo("qwen2.5-coder-1.5b-instruct", 1.5, 32768, False, frozenset({"code", "local"})),
        ModelInfo("qwen2.5-coder-0.5b-instruct", 0.5, 32768, False, frozenset({"code", "local"})),
    )
}


def lookup(name: str) -> ModelInfo | None:
    return CATALOG.get(name)
