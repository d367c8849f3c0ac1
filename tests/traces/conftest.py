"""Mock OpenAI-compatible servers on loopback, configured as routable models."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lar.testing import MockOpenAIServer, text_reply

SERVER = """
import sys
from lar.testing import MockOpenAIServer, text_reply
reply = dict(text_reply("primary says hi"), model=sys.argv[1])
srv = MockOpenAIServer([reply], repeat_last=True).start()
print(srv.url, flush=True)
sys.stdin.read()
"""


def named_reply(model: str, text: str) -> dict[str, Any]:
    return dict(text_reply(text, prompt_tokens=40, completion_tokens=8), model=model)


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


class ServerProcess:
    """A mock endpoint in its own process, so a test can kill it."""

    def __init__(self, model: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, model],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


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
