"""Secrets never leave the agent in events or logs (issue 3, Must show 6 — logs and events)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.redact import MASK, Redactor
from lar.testing import MockOpenAIServer, text_reply, tool_call_reply
from lar.types import TextDelta, event_to_json

KEY = "sk-configured-0123456789abcdefXYZ"


def test_patterns_and_known_values() -> None:
    r = Redactor(["hunter2-secret"])
    assert r.text("pw hunter2-secret end") == f"pw {MASK} end"
    for token in (
        "sk-proj-abcdefghijklmnop1234",
        "ghp_" + "a" * 36,
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdef",
        "Bearer abcdefghijklmnopqrstuvwxyz012345",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
    ):
        assert MASK in r.text(f"x {token} y") and token not in r.text(f"x {token} y")
    assert r.text("nothing secret here: 12345") == "nothing secret here: 12345"


def test_events_are_masked_everywhere(lar_home: Path) -> None:
    @tool
    def leak(hint: str = "") -> str:
        """Returns a credential by mistake."""
        return f"token={KEY}"

    call = '<tool_call>{"name": "leak", "arguments": {"hint": "' + KEY + '"}}</tool_call>'
    engine = ScriptedEngine([call, f"The key is {KEY}."])
    agent = Agent(tools=[leak], engine=engine, api_key=KEY)
    events = list(agent.stream("show me"))
    agent.close()
    dumped = "\n".join(event_to_json(e) for e in events)
    assert KEY not in dumped and MASK in dumped  # call arguments, tool result, streamed text, final
    assert any(isinstance(e, TextDelta) for e in events)


def test_cli_logs_and_json_never_show_the_configured_key(lar_home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "creds.txt").write_text(f"OPENAI_API_KEY={KEY}\n")
    script = [tool_call_reply("file_read", {"path": "creds.txt"}), text_reply(f"It is {KEY}")]
    with MockOpenAIServer(script * 2, api_key=KEY) as srv:
        (lar_home / "config.yaml").write_text(
            "model: m\nmodels:\n  - name: m\n    engine: openai\n"
            f"    base_url: {srv.url}\n    api_key: ${{MY_KEY}}\n"
        )
        env = {"LAR_HOME": str(lar_home), "PATH": "/usr/bin:/bin", "MY_KEY": KEY}
        outs = [
            subprocess.run(
                [sys.executable, "-m", "lar", "run", *flags, "what is in creds.txt?"],
                capture_output=True,
                text=True,
                env=env,
                cwd=ws,
                timeout=60,
            )
            for flags in ([], ["--json"])
        ]
    for out in outs:
        assert out.returncode == 0, out.stderr
        assert KEY not in out.stdout and KEY not in out.stderr
        assert MASK in out.stdout
    # checkpoints and tool-call records: every file of the task database, WAL included
    db_files = list(lar_home.glob("lar.db*"))
    assert db_files and all(KEY.encode() not in f.read_bytes() for f in db_files)
    assert any(MASK.encode() in f.read_bytes() for f in db_files)
    assert all(json.loads(line) for line in outs[1].stdout.splitlines())


def _inject(data: object, key: str) -> object:
    if isinstance(data, dict):
        return {k: (v if k == "type" else _inject(v, key)) for k, v in data.items()}
    if isinstance(data, list):
        return [_inject(v, key) for v in data]
    if isinstance(data, str):
        return f"{data} {key}"
    return data


def test_every_text_field_of_every_event_type_is_covered() -> None:
    import importlib.util

    from lar.types import event_from_json, to_dict

    spec = importlib.util.spec_from_file_location(
        "samples", Path(__file__).with_name("test_types.py")
    )
    assert spec is not None and spec.loader is not None
    samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samples)
    redactor = Redactor([KEY])
    for event in samples.EVENTS:  # one of every event type (test_types checks that)
        poisoned = event_from_json(json.dumps(_inject(to_dict(event), KEY)))
        cleaned = event_to_json(redactor.event(poisoned))
        if type(event).__name__ in ("RunStarted", "ModelCalled"):
            continue  # model names and run ids only: not user, model or tool text
        assert KEY not in cleaned, type(event).__name__


# Configured secrets as people have them: quotes, backslashes, non-ASCII (issue 16, Must show 8).
AWKWARD = ['pa"ss\\word-2024', "сек-ретный-ключ-Ω", 'q"u\\o\'te\\"mix']
URL = "postgres://bob:Hunter2-db-pass@db.internal:5432/app"


def test_awkward_secrets_and_url_passwords_are_masked_as_written() -> None:
    r = Redactor(AWKWARD)
    for secret in AWKWARD:
        assert r.text(f"<{secret}>") == f"<{MASK}>"
    assert (
        r.text(f"connect to {URL} now")
        == f"connect to postgres://bob:{MASK}@db.internal:5432/app now"
    )
    assert (
        r.text("https://example.org/a:b@c is no password")
        == "https://example.org/a:b@c is no password"
    )


def test_awkward_secrets_are_masked_in_every_table_and_output(lar_home: Path) -> None:
    """Through `lar run --json` with the secrets configured as credentials: the output, every
    table of lar.db (tasks, tool calls, traces, notes) and the memory files stay clean."""
    import sqlite3

    text = f"keep {AWKWARD[0]} and {AWKWARD[1]} and {AWKWARD[2]} for {URL}"
    script = [tool_call_reply("notes", {"action": "add", "text": text}), text_reply(text)]
    with MockOpenAIServer(script) as srv:
        creds = {f"c{i}": secret for i, secret in enumerate(AWKWARD)}
        (lar_home / "config.yaml").write_text(
            "model: mock\n"
            f"models:\n  - {{name: mock, engine: openai, base_url: '{srv.url}'}}\n"
            f"tools:\n  credentials: {json.dumps(creds)}\n"
        )
        out = subprocess.run(
            [sys.executable, "-m", "lar", "run", "--json", "--yes", "note it"],
            capture_output=True,
            text=True,
            env={"LAR_HOME": str(lar_home), "PATH": "/usr/bin:/bin"},
            cwd=lar_home,
            timeout=120,
        )
    assert out.returncode == 0, out.stderr
    db = sqlite3.connect(lar_home / "lar.db")
    rows = "\n".join(db.iterdump())
    notes = db.execute("SELECT text FROM notes").fetchall()
    db.close()
    files = "\n".join(
        p.read_text(errors="replace") for p in (lar_home / "memory").rglob("*.md") if p.is_file()
    )
    for secret in [*AWKWARD, "Hunter2-db-pass"]:
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
        for form in forms:
            for where, data in (("output", out.stdout + out.stderr), ("lar.db", rows)):
                assert form not in data, (where, form)
            assert form not in files
    assert len(notes) == 1 and f"postgres://bob:{MASK}@db.internal" in notes[0][0]


def test_memory_mirrors_are_private(lar_home: Path) -> None:
    from lar.config import load_config
    from lar.memory import open_memory

    memory = open_memory(load_config(home=lar_home))
    memory.store.add("I drink green tea")
    memory.sync_files()
    memory.files.archive("s_1", "tea talk", [("user", "I drink green tea", 0.0)])
    memory.store.close()
    folder = lar_home / "memory"
    made = [p for p in folder.rglob("*") if not p.name.startswith(".")]
    assert any(p.suffix == ".md" for p in made)
    for path in [folder, *made]:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
