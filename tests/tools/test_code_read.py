"""code_read: Python over the workspace that asks no one because it cannot change anything.

Each test makes the call as a model would (through the executor, with no approver at all, so
anything that needed a yes would be refused) and checks what reached the disk or the network.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from lar.agents import gather_tools
from lar.config import load_config
from lar.errors import ConfigError
from lar.tools import builtin_tools, optional_tools
from lar.tools.base import ToolContext
from lar.tools.builtin import code
from lar.tools.executor import ToolExecutor
from lar.tools.sandbox import isolation_level
from lar.types import ToolCall, ToolResult

if isolation_level() != "bubblewrap":
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the read-only code tests: install bubblewrap (install.sh)")
    pytest.skip("bubblewrap is not installed: no read-only mount", allow_module_level=True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "sales.csv").write_text("region,amount\nnorth,12.5\nsouth,7.25\nnorth,30\n")
    (folder / "keep.txt").write_text("the user's words\n")
    return folder


def run(ws: Path, source: str) -> ToolResult:
    executor = ToolExecutor(optional_tools(["code_read"]))  # no approver: nothing can say yes
    try:
        return asyncio.run(
            executor.run(ToolCall("c", "code_read", {"code": source}), ToolContext(workspace=ws))
        )
    finally:
        executor.close()


def test_a_data_question_is_computed_without_anyone_asked(ws: Path) -> None:
    result = run(
        ws,
        "import csv\nrows = list(csv.DictReader(open('sales.csv')))\n"
        "sum(float(r['amount']) for r in rows if r['region'] == 'north')",
    )
    assert result.ok and "exit_code: 0" in result.content and "42.5" in result.content


@pytest.mark.parametrize(
    "source",
    [
        "open('new.txt', 'w').write('x')",
        "open('keep.txt', 'a').write('more')",
        "open('keep.txt', 'w').write('')",
        "import os; os.remove('keep.txt')",
        "import os; os.rename('keep.txt', 'moved.txt')",
        "import os; os.mkdir('made')",
        "import shutil; shutil.rmtree('.', ignore_errors=False)",
        "import subprocess as s; s.run(['sh', '-c', 'echo x > new.txt; rm keep.txt'], check=True)",
    ],
    ids=["create", "append", "truncate", "delete", "rename", "mkdir", "rmtree", "subprocess"],
)
def test_it_cannot_write_or_delete_anything_in_the_workspace(ws: Path, source: str) -> None:
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    result = run(ws, source)
    assert "exit_code: 0" not in result.content, result.content
    refused = ("Read-only file system", "Operation not permitted")  # the mount, the filter
    assert any(why in result.content for why in refused), result.content
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before


def test_nothing_is_opened_for_writing_not_even_scratch_or_a_fifo(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    reader = os.open(ws / "pipe", os.O_RDONLY | os.O_NONBLOCK)  # a writer would not block
    try:
        result = run(ws, "open('/tmp/scratch', 'w').write('x')")
        assert "exit_code: 1" in result.content and "PermissionError" in result.content
        result = run(ws, "open('pipe', 'w').write('through the fifo')")
        assert "exit_code: 1" in result.content and "PermissionError" in result.content
        assert os.read(reader, 100) == b""
    finally:
        os.close(reader)


def test_no_socket_is_made_not_even_to_a_unix_socket_in_the_workspace(ws: Path) -> None:
    path = ws / "control.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(0.5)
    try:
        result = run(
            ws,
            "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('control.sock')\n"
            "s.sendall(b'rm -rf ~')\nprint('connected')",
        )
        assert "connected" not in result.content and "PermissionError" in result.content
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_it_cannot_reach_the_network_not_even_loopback(ws: Path, loopback_listener: Any) -> None:
    result = run(
        ws,
        f"import socket\ns = socket.create_connection(('127.0.0.1', {loopback_listener.port}), "
        "timeout=3)\ns.sendall(b'leak')\nprint('connected')",
    )
    assert "connected" not in result.content and "exit_code: 0" not in result.content
    assert loopback_listener.accepted == []


def test_it_is_offered_only_when_the_config_names_it(lar_home: Path) -> None:
    assert "code_read" not in {t.name for t in builtin_tools()}
    (lar_home / "config.yaml").write_text("tools:\n  extra: [code_read]\n")
    found = gather_tools(load_config(), mcp=False)
    try:
        [tool] = [t for t in found.tools if t.name == "code_read"]
        assert tool.permission == "auto" and tool.read_only
    finally:
        found.close()


def test_an_unknown_extra_tool_is_named_with_the_known_ones(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text("tools:\n  extra: [code_reader]\n")
    with pytest.raises(ConfigError) as err:
        gather_tools(load_config(), mcp=False)
    message = str(err.value)
    assert "tools.extra" in message and "'code_reader'" in message and "code_read" in message
    assert str(lar_home / "config.yaml") in message


def test_without_a_read_only_mount_it_does_not_run(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code, "isolation_level", lambda: "rlimits")
    result = run(ws, "open('new.txt', 'w').write('x')")
    assert not result.ok and "needs bubblewrap" in result.content and "code_run" in result.content
    assert not (ws / "new.txt").exists()
