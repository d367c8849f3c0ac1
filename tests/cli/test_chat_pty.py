"""Confirmation in a real terminal (issue 3, Must show 5): `lar chat` driven through a pty."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import configure_mock, spawn_chat

from lar.testing import MockOpenAIServer, text_reply, tool_call_reply

pexpect = pytest.importorskip("pexpect", reason="pexpect is a dev dependency")


def test_chat_asks_and_n_denies_y_runs(lar_home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write = tool_call_reply("file_write", {"path": "made.txt", "content": "hello"})

    def after_tool(body: dict) -> dict:  # type: ignore[type-arg]
        last = body["messages"][-1]["content"]
        return text_reply("It was denied." if "did not allow" in last else "Written.")

    # refused_call: after the "n" the run ends on Lar's account, with no model reply
    with MockOpenAIServer([write, write, after_tool]) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_chat(lar_home, ws)
        try:
            child.expect("you> ")
            child.sendline("write made.txt")
            child.expect("file_write wants to run: ")
            child.expect(r"Allow\? \[y/N\] ")
            child.sendline("n")
            # the answer check's account: how to give the yes here
            child.expect("file_write was not run: it needs your permission")
            child.expect("answer y when Lar asks")
            assert not (ws / "made.txt").exists()
            child.expect("you> ")
            child.sendline("write it again")
            child.expect(r"Allow\? \[y/N\] ")
            child.sendline("y")
            child.expect("Written.")
            child.expect("you> ")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert (ws / "made.txt").read_text() == "hello"


def test_btw_side_question_does_not_enter_the_conversation(lar_home: Path, tmp_path: Path) -> None:
    def reply(body: dict) -> dict:  # type: ignore[type-arg]
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        return text_reply(f"seen: {' | '.join(users)}")

    with MockOpenAIServer([reply], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_chat(lar_home, tmp_path)
        try:
            child.expect("you> ")
            child.sendline("first")
            child.expect("seen: first")
            child.expect("you> ")
            child.sendline("/btw what time is it")
            child.expect("seen: first \\| what time is it")  # the side question sees the context
            child.expect("you> ")
            child.sendline("second")
            child.expect("seen: first \\| second")  # ... but the conversation never saw it
            child.expect("you> ")
            child.sendline("/resume")
            child.expect("no interrupted task to resume")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)


def test_chat_start_consolidates_an_earlier_idle_conversation(
    lar_home: Path, tmp_path: Path
) -> None:
    import sqlite3
    import time

    from lar.memory.consolidate import TURNS_SCHEMA
    from lar.memory.store import MemoryStore

    MemoryStore(lar_home / "lar.db").close()
    db = sqlite3.connect(lar_home / "lar.db")
    db.executescript(TURNS_SCHEMA)
    long_ago = time.time() - 600
    db.executemany(
        "INSERT INTO memory_turns (session_id, role, content, at) VALUES ('s_old', ?, ?, ?)",
        [("user", "I live in Porto now.", long_ago), ("assistant", "Nice city!", long_ago + 1)],
    )
    db.commit()
    summary = text_reply("The user moved to Porto.\nFACTS:\n- none")
    with MockOpenAIServer([summary]) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_chat(lar_home, tmp_path)
        try:
            child.expect(r"memory: 2 turns → 1 facts, archived in \S*L4_archive")
            child.expect("you> ")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    facts = [r.content for r in MemoryStore(lar_home / "lar.db").records()]
    assert "I live in Porto now." in facts and "Session summary: The user moved to Porto." in facts


def test_chat_routes_every_message(lar_home: Path, tmp_path: Path) -> None:
    """Issue 5: in `lar chat` the router picks the model per message, and the trace keeps it."""
    small = MockOpenAIServer([text_reply("small here")], repeat_last=True)
    coder = MockOpenAIServer([text_reply("coder here")], repeat_last=True)
    with small, coder:
        (lar_home / "config.yaml").write_text(
            "model: coder\nmodels:\n"
            f"  - {{name: small, engine: openai, base_url: '{small.url}',"
            " catalog: {params_b: 0.5}}\n"
            f"  - {{name: coder, engine: openai, base_url: '{coder.url}',"
            " catalog: {params_b: 1.5, tags: [code]}}\n"
        )
        child = spawn_chat(lar_home, tmp_path)
        try:
            child.expect("you> ")
            child.sendline("hi")
            child.expect(r"route: small \(heuristic: complexity 0.00 < 0.2: smallest")
            child.expect("small here")
            child.expect("you> ")
            child.sendline("Write a Python function that reverses a list.")
            child.expect(r"route: coder \(heuristic: code in the query")
            child.expect("coder here")
            child.expect("you> ")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert len(small.requests) == 1 and len(coder.requests) == 1
    from lar.traces import TraceStore

    store = TraceStore(lar_home / "lar.db")
    assert [t.model for t in reversed(store.recent())] == ["small", "coder"]
    store.close()


def test_chat_previews_a_shell_run_and_applies_only_on_yes(lar_home: Path, tmp_path: Path) -> None:
    """Under confirm the shell command runs on a copy first; the question names what it would
    change, and the workspace changes only after a yes."""
    from lar.tools.sandbox import isolation_level

    if isolation_level() != "bubblewrap":
        pytest.skip("previews need bubblewrap (a copy mounted in the workspace's place)")
    ws = tmp_path / "ws"
    (ws / "build").mkdir(parents=True)
    (ws / "build" / "old.o").write_text("object")
    clean = tool_call_reply("shell", {"command": "rm -r build && echo done > clean.log"})

    def after_tool(body: dict) -> dict:  # type: ignore[type-arg]
        last = body["messages"][-1]["content"]
        return text_reply("Not applied." if "did not apply" in last else "Cleaned.")

    with MockOpenAIServer([clean, after_tool, clean, after_tool]) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_chat(lar_home, ws)
        try:
            child.expect("you> ")
            child.sendline("clean the build")
            child.expect("ran on a copy of the workspace")
            child.expect(r"creates 1 \(clean.log\); deletes 2 \(build/\)")
            child.expect(r"Apply\? \[y/N\] ")
            assert not (ws / "clean.log").exists()
            child.sendline("n")
            child.expect("Not applied.")
            assert (ws / "build" / "old.o").exists() and not (ws / "clean.log").exists()
            child.expect("you> ")
            child.sendline("do it")
            child.expect(r"Apply\? \[y/N\] ")
            child.sendline("y")
            child.expect("Cleaned.")
            child.expect("you> ")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert not (ws / "build").exists() and (ws / "clean.log").read_text() == "done\n"


def test_the_answer_ends_its_own_line_before_the_log_goes_on(
    lar_home: Path, tmp_path: Path
) -> None:
    with MockOpenAIServer([text_reply("Lisbon is in Portugal.")], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        child = spawn_chat(lar_home, tmp_path)
        try:
            child.expect("you> ")
            child.sendline("where is Lisbon?")
            child.expect("Lisbon is in Portugal.")
            after = child.readline()  # what follows the answer on its line
            assert after.strip() == "", repr(after)
            child.expect("you> ")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)


def test_skills_trace_and_memory_commands(lar_home: Path, tmp_path: Path) -> None:
    from test_cli import lar

    folder = tmp_path / "packing-list"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: packing-list\ndescription: Make a packing list for a trip.\n---\nList.\n"
    )
    with MockOpenAIServer([text_reply("Noted: Miso.")], repeat_last=True) as srv:
        configure_mock(lar_home, srv.url)
        assert lar("skill", "install", str(folder), "--trust", home=lar_home).returncode == 0
        child = spawn_chat(lar_home, tmp_path)
        try:
            child.expect("you> ")
            child.sendline("/trace")
            child.expect("no run yet in this chat")
            child.sendline("/skills")
            child.expect("packing-list")
            child.expect("enabled")
            child.expect("Make a packing list for a trip.")
            child.expect("you> ")
            child.sendline("My cat is called Miso.")
            child.expect("Noted: Miso.")
            child.expect("you> ")
            child.sendline("/trace")
            child.expect(r"t_[0-9a-f]{12}")
            child.expect("answer")
            child.expect("llm #1: ")
            child.expect("you> ")
            child.sendline("/memory")
            child.expect("memory index")
            child.expect("cat")
            child.expect("you> ")
            child.sendline("/memory what is my cat called")
            child.expect("Miso")
            child.expect("you> ")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
