"""The ``model`` capability: a sampled model call as a *seeded* pipeline step.

A role may ask the model for text (a draft clause, a summary of a finding) only through
``model_text``, whose contract is ``seeded``: the step must give a fixed ``seed:``, which is sent
to the engine with the temperature, so the same input gives the same text on the same model and
build. Its probe says whether a model is there; without one the capability is UNAVAILABLE and
the role's declared degraded tool runs instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lar.engines import Engine
from lar.roles.capability import Capability, Probe
from lar.roles.contracts import ToolImpl
from lar.types import Message

__all__ = ["model_capability"]


def model_capability(engine: Callable[[], Engine | None]) -> Capability:
    def model_text(args: dict[str, Any]) -> dict[str, Any]:
        found = engine()
        if found is None:
            raise RuntimeError("no model is loaded (run without --plain)")
        messages = []
        if args.get("system"):
            messages.append(Message("system", str(args["system"])))
        messages.append(Message("user", str(args["prompt"])))
        response = asyncio.run(
            found.generate(
                messages,
                None,
                seed=int(args["seed"]),
                temperature=float(args.get("temperature", 0.7)),
                max_tokens=int(args.get("max_tokens", 256)),
            )
        )
        return {"text": (response.content or "").strip(), "model": found.name}

    def ready(args: dict[str, Any]) -> dict[str, Any]:
        return {"ready": engine() is not None}

    text_in = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string"},
            "system": {"type": "string"},
            "seed": {"type": "integer"},
            "temperature": {"type": "number"},
            "max_tokens": {"type": "integer"},
        },
        "required": ["prompt", "seed"],
    }
    text_out = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "model": {"type": "string"}},
        "required": ["text", "model"],
    }
    return Capability(
        name="model",
        version="1.0.0",
        tools={
            "model_text": ToolImpl(
                "model_text",
                model_text,
                text_in,
                text_out,
                determinism="seeded",
                capability="model",
                version="1.0.0",
            ),
            "model_ready": ToolImpl(
                "model_ready",
                ready,
                {"type": "object"},
                {"type": "object"},
                capability="model",
                version="1.0.0",
            ),
        },
        probe=Probe("model_ready", {}, {"ready": True}),
    )
