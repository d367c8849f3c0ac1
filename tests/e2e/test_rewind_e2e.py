"""Marks in the embedded engine's prompt cache (Engine.set_mark / rewind): what makes an
evaluation's task independent of the task before it (lar.evals.everyday.EverydayRunner)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from lar.config import load_config
from lar.engines import build_engine
from lar.types import Message, ModelResponse

SYSTEM = (
    "You are a careful assistant. Answer with the number only. "
    + "Numbers are written with digits, never in words. " * 12
)


@pytest.mark.timeout(600)
def test_a_rewound_engine_computes_a_request_as_it_did_at_the_mark(lar_home: Path) -> None:
    # llama.cpp also keeps earlier prompts in RAM (cache_ram_mib) and may restore one itself,
    # so what a request costs after another one is not asserted: the mark's restore is.
    engine = build_engine(load_config())
    folder = lar_home / "cache" / "prompts"

    async def ask(question: str) -> ModelResponse:
        messages = [Message(role="system", content=SYSTEM), Message(role="user", content=question)]
        return await engine.generate(messages, max_tokens=8, temperature=0.0)

    async def scenario() -> dict[str, ModelResponse]:
        assert await engine.rewind(None)  # empty: what was restored at load is gone
        seen = {"first": await ask("What is 17 + 25?")}
        assert await engine.set_mark("t")
        seen["other"] = await ask("What is 6 * 7 + 100?")
        assert await engine.rewind("t")
        seen["rewound"] = await ask("What is 17 + 25?")
        assert not await engine.rewind("never-set")  # no such mark: nothing restored
        [mark] = folder.glob("*.t.mark")
        mark.write_bytes(b"not a llama.cpp slot file")
        assert not await engine.rewind("t")  # a torn mark is refused
        await engine.aclose()
        return seen

    seen = asyncio.run(scenario())
    t = {k: r.timings for k, r in seen.items()}
    assert t["first"].prompt_cached == 0  # emptied before it
    # At the mark the slot held the first request: asked again, only its last token is computed
    assert t["rewound"].prompt_evaluated <= 2, t["rewound"]
    assert t["rewound"].prompt_cached >= t["first"].prompt_evaluated - 2
    assert seen["rewound"].content == seen["first"].content and "42" in seen["first"].content

    [mark] = folder.glob("*.t.mark")
    assert stat.S_IMODE(mark.stat().st_mode) == 0o600
    engine.drop_mark("t")
    assert not mark.exists()
    with pytest.raises(ValueError, match="a mark is"):
        engine.drop_mark("../outside")
