"""The ``lar`` command as a user runs it: a real subprocess against a loopback mock endpoint."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lar.testing import MockOpenAIServer, text_reply, tool_call_reply


def lar(
    *args: str, home: Path, cwd: Path | None = None, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    env = {
        "LAR_HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # the lar this test imported
        "COLUMNS": str(columns),
    }
    return subprocess.run(
        [sys.executable, "-m", "lar", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def configure(home: Path, url: str) -> None:
    (home / "config.yaml").write_text(
        "model: mock\nmodels:\n  - name: mock\n    engine: openai\n"
        f"    base_url: {url}\n    retries: 0\n"
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("buy milk\n")
    return ws


def test_version_and_help(lar_home: Path) -> None:
    out = lar("--version", home=lar_home)
    assert out.returncode == 0 and out.stdout.strip() == "lar 0.1.0"
    helptext = lar("--help", home=lar_home).stdout
    assert "run" in helptext and "chat" in helptext and "model" in helptext
    assert "--yes" in lar("run", "--help", home=lar_home).stdout


def test_invalid_config_is_one_clear_line(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text("agent:\n  max_turn: 3\n")
    out = lar("run", "hi", home=lar_home)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert (
        "config.yaml:2: agent.max_turn: unknown key 'max_turn'; allowed keys: max_turns"
        in out.stderr
    )


def test_run_answers_on_stdout_with_staged_logs_on_stderr(lar_home: Path, workspace: Path) -> None:
    script = [tool_call_reply("file_read", {"path": "notes.txt"}), text_reply("Buy milk.")]
    with MockOpenAIServer(script) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "What is in notes.txt?", home=lar_home, cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Buy milk.\n"
    assert "llm: mock, prompt 10 tokens, 1 tool_call" in out.stderr
    assert 'tool: file_read(path="notes.txt") ok' in out.stderr
    assert "done. total tokens 30" in out.stderr
    assert srv.requests[1]["messages"][-1]["content"] == (
        "L1: buy milk\n[the whole file: 1 line, 2 words, 9 bytes]"
    )


def test_json_prints_one_event_per_line(lar_home: Path, workspace: Path) -> None:
    with MockOpenAIServer([text_reply("Hi there.")]) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "--json", "hello", home=lar_home, cwd=workspace)
    assert out.returncode == 0
    events = [json.loads(line) for line in out.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "run_started" and types[-1] == "final"
    assert "text_delta" in types and "model_called" in types
    assert events[-1]["text"] == "Hi there."


def test_confirm_tools_are_denied_without_yes(lar_home: Path, workspace: Path) -> None:
    script = [
        tool_call_reply("code_run", {"code": "open('pwned', 'w')"}),
        text_reply("I could not run it."),
    ]
    with MockOpenAIServer(script) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "run it", home=lar_home, cwd=workspace)
        assert "code_run(" in out.stderr and "denied" in out.stderr
        assert "code_run was not run: it needs your permission" in out.stdout
        assert "--yes" in out.stdout and len(srv.requests) == 1  # the run ended on the refusal
    assert not (workspace / "pwned").exists()
    script = [
        tool_call_reply("code_run", {"code": "open('made', 'w').close()"}),
        text_reply("Done."),
    ]
    with MockOpenAIServer(script) as srv:
        configure(lar_home, srv.url)
        assert lar("run", "--yes", "run it", home=lar_home, cwd=workspace).returncode == 0
    assert (workspace / "made").exists()


def test_unreachable_endpoint_is_a_clean_error(lar_home: Path, workspace: Path) -> None:
    configure(lar_home, "http://127.0.0.1:9/v1")
    out = lar("run", "hi", home=lar_home, cwd=workspace)
    assert out.returncode == 1
    assert "error:" in out.stderr and "cannot reach http://127.0.0.1:9/v1" in out.stderr
    assert "Traceback" not in out.stderr


def test_model_that_never_stops_ends_with_exit_3(lar_home: Path, workspace: Path) -> None:
    with MockOpenAIServer(
        [tool_call_reply("file_read", {"path": "notes.txt"})], repeat_last=True
    ) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "loop", home=lar_home, cwd=workspace)
    assert out.returncode == 3
    assert out.stdout.startswith('file_read(path="notes.txt") returned:')
    assert "already ran" in out.stderr
    assert len(srv.requests) == 3


def test_user_tools_from_the_tools_directory(lar_home: Path, workspace: Path) -> None:
    tools = lar_home / "tools"
    tools.mkdir()
    (tools / "greet.py").write_text(
        "from lar import tool\n\n@tool\ndef greet(name: str) -> str:\n"
        '    """Greet someone."""\n    return f"Hello, {name}!"\n'
    )
    with MockOpenAIServer(
        [tool_call_reply("greet", {"name": "Ana"}), text_reply("Said hello.")]
    ) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "greet Ana", home=lar_home, cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert srv.requests[1]["messages"][-1]["content"] == "Hello, Ana!"
    assert any(t["function"]["name"] == "greet" for t in srv.requests[0]["tools"])
    (tools / "broken.py").write_text("import does_not_exist\n")
    out = lar("run", "x", home=lar_home, cwd=workspace)
    assert out.returncode == 1 and "broken.py: cannot load tools: ModuleNotFoundError" in out.stderr


def test_doctor_reports_the_sandbox_level(lar_home: Path) -> None:
    from lar.tools.sandbox import isolation_level

    out = lar("doctor", home=lar_home)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if "sandbox" in line)
    assert isolation_level() in row
    assert "not assembled" in out.stdout and "lar model install" in out.stdout
    from lar.telemetry.energy import available_collectors

    energy = next(line for line in out.stdout.splitlines() if "energy collectors" in line)
    names = [c.name for c in available_collectors()]
    assert (", ".join(names) if names else "none") in energy
    assert "memory embedder" in out.stdout and "all-minilm-l6-v2" in out.stdout


def test_memory_verify_names_the_edited_and_the_deleted_record(lar_home: Path) -> None:
    import sqlite3

    ids = [lar("memory", "add", f"fact number {i}", home=lar_home).stdout.strip() for i in range(4)]
    assert all(i.startswith("m_") for i in ids)
    ok = lar("memory", "verify", home=lar_home)
    assert ok.returncode == 0 and "ok: 4 records" in ok.stdout
    db = sqlite3.connect(lar_home / "lar.db")
    db.execute("UPDATE memories SET content = 'forged' WHERE id = ?", (ids[1],))
    db.commit()
    out = lar("memory", "verify", home=lar_home)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        f"{ids[1]}: content_changed: content does not match its SHA-256"
    ]
    db.execute("DELETE FROM memories WHERE id = ?", (ids[3],))
    db.commit()
    db.close()
    out = lar("memory", "verify", home=lar_home)
    assert f"{ids[3]}: missing_at_end" in out.stdout
    found = lar("memory", "search", "number", home=lar_home)
    assert ids[0] in found.stdout


def test_help_is_in_plain_words_without_spec_codes() -> None:
    """Every command's and option's help, as --help shows it: no SPEC identifiers (X1, L5 …),
    which mean nothing to a user."""
    import re
    from typing import Any

    import typer

    from lar.cli.main import app

    def texts(cmd: Any, path: str) -> list[tuple[str, str]]:
        out = [(path, cmd.help or ""), (path, cmd.short_help or "")]
        out += [(f"{path} {p.name}", getattr(p, "help", None) or "") for p in cmd.params]
        for name, sub in getattr(cmd, "commands", {}).items():  # a group's commands
            out += texts(sub, f"{path} {name}")
        return out

    found = texts(typer.main.get_command(app), "lar")
    assert len(found) > 50  # every command and option was walked
    coded = [(where, t) for where, t in found if re.search(r"\b[A-Z]\d{1,2}\b", t)]
    assert coded == []


def test_listings_read_at_80_columns(lar_home: Path, workspace: Path) -> None:
    """lar tasks, lar trace list and lar model list in a pipe at 80 columns: no line wider,
    every header and id whole (nothing squeezed to "q…")."""
    question = "Which of my notes mention milk, and what else should I buy this week for dinner?"
    with MockOpenAIServer([text_reply("Only notes.txt mentions milk.")], repeat_last=True) as srv:
        configure(lar_home, srv.url)
        ran = lar("run", "--json", question, home=lar_home, cwd=workspace)
    assert ran.returncode == 0, ran.stderr
    run_id = next(json.loads(x)["run_id"] for x in ran.stdout.splitlines() if '"run_started"' in x)
    for args, headers in (
        (("tasks",), ["id", "status", "updated", "request"]),
        (("trace", "list"), ["id", "when", "model", "outcome", "ms", "tokens", "query"]),
        (("model", "list"), ["name", "engine", "where", "params", "context", "local"]),
    ):
        out = lar(*args, home=lar_home, columns=80)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, out.stdout
        assert lines[0].split() == headers, out.stdout
        row = lines[2].split()
        if args == ("tasks",):
            assert row[:2] == [run_id, "succeeded"] and row[4:6] == ["Which", "of"]
        elif args == ("trace", "list"):
            assert row[0] == run_id and row[3:5] == ["mock", "answer"] and row[7] == "Which"
        else:
            assert row[:2] == ["default", "llamacpp"] and {"1.5B", "32768", "yes"} <= set(row)
