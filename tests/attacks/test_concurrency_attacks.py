"""Many runs of one server while another ``lar`` process writes the same ``lar.db``: a busy
file makes a writer wait and try again, it never fails a run; sessions of one process writing
the same memory file never take each other's temporary file."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import call

pytestmark = pytest.mark.anyio

WRITER = """
import sys, time
from pathlib import Path
from lar.memory.store import MemoryStore
home, stop = Path(sys.argv[1]), Path(sys.argv[2])
end = time.monotonic() + 120
n = 0
while not stop.exists() and time.monotonic() < end:
    store = MemoryStore(home / "lar.db")
    store.add(f"fact {n}: the user keeps bees")
    store.close()
    n += 1
print(n)
"""


async def test_runs_survive_another_process_writing_the_database(
    make_client: Any, lar_home: Path, tmp_path: Path
) -> None:
    steps = [call("calculate", expression="1+1"), "two"]
    client, hub, engine = await make_client(steps, memory=True)
    engine.repeat_last = True
    stop = tmp_path / "stop"
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(lar_home), str(stop), stdout=subprocess.PIPE
    )
    try:
        replies = await asyncio.gather(
            *[
                client.post(
                    "/v1/chat/completions",
                    json={"messages": [{"role": "user", "content": f"what is {i} + 1?"}]},
                )
                for i in range(80)
            ]
        )
    finally:
        stop.touch()
        out, _ = await asyncio.wait_for(writer.communicate(), timeout=150)
    failed = [r.json()["error"]["message"] for r in replies if r.status_code != 200]
    assert failed == []
    assert int(out.strip()) > 0  # the other process did write meanwhile
