"""``lar serve`` as a process: the official ``openai`` package against it, on a mock endpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import openai
from tests.server._process import ask_streaming, auth, lar_serve, token_of

from lar.testing import MockOpenAIServer, text_reply, tool_call_reply


def _configure(home: Path, url: str) -> None:
    (home / "config.yaml").write_text(
        "model: mock\nmodels:\n  - name: mock\n    engine: openai\n"
        f"    base_url: {url}\n    retries: 0\n"
    )


def test_the_openai_package_gets_answers_streams_and_models(lar_home: Path, tmp_path: Path) -> None:
    script = [
        tool_call_reply("calculate", {"expression": "6*7"}),
        text_reply("It is 42."),
        tool_call_reply("calculate", {"expression": "6*7"}, call_id="call_2"),
        text_reply("Again 42."),
    ]
    with MockOpenAIServer(script) as mock:
        _configure(lar_home, mock.url)
        with lar_serve(lar_home, cwd=tmp_path) as url:
            client = openai.OpenAI(base_url=f"{url}/v1", api_key=token_of(lar_home), max_retries=0)
            models = [m.id for m in client.models.list()]
            assert models == ["lar", "lar/default", "lar/mock"]
            reply = client.chat.completions.create(
                model="lar", messages=[{"role": "user", "content": "What is 6*7?"}]
            )
            assert reply.choices[0].message.content.endswith("It is 42.")
            assert "> ⚙ calculate" in reply.choices[0].message.content
            assert reply.usage is not None and reply.usage.total_tokens > 0
            text, usage = ask_streaming(client, "And 6*7 once more?")
            assert text.rstrip().endswith("Again 42.")
            assert usage is not None and usage.completion_tokens > 0
            ready = httpx.get(f"{url}/health/ready", headers=auth(lar_home), timeout=10)
            assert ready.status_code == 200, ready.text


def _lar(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env={"LAR_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_lar_run_uses_a_running_server_unless_local(lar_home: Path, tmp_path: Path) -> None:
    here = tmp_path / "project"
    here.mkdir()
    script = [
        tool_call_reply("file_write", {"path": "out.txt", "content": "via the server"}),
        text_reply("Written."),
        text_reply("Answered here."),
    ]
    with MockOpenAIServer(script) as mock:
        _configure(lar_home, mock.url)
        with lar_serve(lar_home, cwd=tmp_path) as url:
            assert json.loads((lar_home / "server.json").read_text())["url"] == url
            served = _lar(lar_home, here, "run", "--yes", "Write 'via the server' to out.txt")
            assert served.returncode == 0, served.stderr
            assert f"using lar serve at {url}" in served.stderr
            assert served.stdout.strip() == "Written."
            # the tools worked in the caller's folder, not the server's
            assert (here / "out.txt").read_text() == "via the server"
            runs = httpx.get(f"{url}/api/runs", headers=auth(lar_home), timeout=10).json()["runs"]
            assert [r["request"] for r in runs] == ["Write 'via the server' to out.txt"]
            local = _lar(lar_home, here, "run", "--local", "Say hi")
            assert local.returncode == 0, local.stderr
            assert "using lar serve" not in local.stderr
            assert local.stdout.strip() == "Answered here."
            runs = httpx.get(f"{url}/api/runs", headers=auth(lar_home), timeout=10).json()["runs"]
            served_here = [r["request"] for r in runs if "events" in r]  # this server's runs
            assert served_here == ["Write 'via the server' to out.txt"]
            assert "Say hi" in [r["request"] for r in runs]  # its trace, in the shared lar.db
        assert not (lar_home / "server.json").exists()  # removed when the server stopped
