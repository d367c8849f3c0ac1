"""End to end on the embedded model: a question only an MCP server can answer makes the model
call the reference time server's tool (stdio), and the answer carries its result."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path


def test_what_time_is_it_in_tokyo_is_answered_by_the_time_servers_tool(
    lar_home: Path, tmp_path: Path
) -> None:
    (lar_home / "config.yaml").write_text(
        "mcp:\n  time:\n"
        f"    command: {sys.executable}\n"
        "    args: [-m, mcp_server_time, --local-timezone, UTC]\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "lar", "run", "--yes", "--json", "What time is it in Tokyo?"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    results = [
        e["result"]
        for e in events
        if e["type"] == "tool_result" and e["result"]["name"] == "time__get_current_time"
    ]
    assert results and results[-1]["ok"], events
    told = json.loads(results[-1]["content"])
    assert told["timezone"] == "Asia/Tokyo"
    moment = datetime.fromisoformat(told["datetime"])
    [final] = [e for e in events if e["type"] == "final"]
    answer = final["text"]
    # The answer gives the server's time (24-hour or 12-hour clock), not one of its own.
    hours = {f"{moment.hour}:{moment.minute:02d}", f"{moment.hour:02d}:{moment.minute:02d}"}
    twelve = (moment.hour % 12) or 12  # "2:59 PM" or "02:59 PM"
    hours |= {f"{twelve}:{moment.minute:02d}", f"{twelve:02d}:{moment.minute:02d}"}
    assert any(re.search(rf"(?<!\d){re.escape(h)}(?!\d)", answer) for h in hours), answer
