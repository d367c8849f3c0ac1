"""Two routable mock models, and endpoints in processes a test can kill."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _servers import ServerProcess, named_reply

from lar.testing import MockOpenAIServer


@pytest.fixture
def two_models(lar_home: Path) -> Iterator[tuple[MockOpenAIServer, MockOpenAIServer]]:
    """``small`` (0.5B) and ``coder`` (1.5B, tagged code), both local OpenAI endpoints."""
    small = MockOpenAIServer([named_reply("small-0.5b", "Hello!")], repeat_last=True).start()
    coder = MockOpenAIServer([named_reply("coder-1.5b", "def f(): pass")], repeat_last=True)
    coder.start()
    (lar_home / "config.yaml").write_text(
        "model: coder\n"
        "models:\n"
        f"  - {{name: small, engine: openai, base_url: '{small.url}', retries: 0,\n"
        "      catalog: {params_b: 0.5, price_in_per_m: 0.1, price_out_per_m: 0.2}}\n"
        f"  - {{name: coder, engine: openai, base_url: '{coder.url}', retries: 0,\n"
        "      catalog: {params_b: 1.5, tags: [code]}}\n"
    )
    yield small, coder
    small.stop()
    coder.stop()


@pytest.fixture
def server_process() -> Iterator[type[ServerProcess]]:
    started: list[ServerProcess] = []

    class Tracked(ServerProcess):
        def __init__(self, model: str) -> None:
            super().__init__(model)
            started.append(self)

    yield Tracked
    for s in started:
        if s.proc.poll() is None:
            s.kill()
