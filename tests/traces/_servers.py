"""Mock OpenAI-compatible endpoints on loopback: in this process, or in a killable one."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from lar.testing import text_reply

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
