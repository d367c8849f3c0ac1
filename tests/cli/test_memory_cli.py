"""`lar memory` and `lar prompt` from the command line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from _helpers import configure_mock
from test_cli import lar

from lar.testing import MockOpenAIServer, text_reply


def test_add_list_search_forget_and_the_files(lar_home: Path) -> None:
    tea = lar("memory", "add", "I prefer green tea.", "--type", "preference", home=lar_home)
    assert tea.returncode == 0, tea.stderr
    tea_id = tea.stdout.strip()
    again = lar("memory", "add", "I prefer green tea!", "--type", "preference", home=lar_home)
    assert again.stdout.strip() == f"{tea_id} (already known; merged)"
    city = lar("memory", "add", "I live in Lisbon.", home=lar_home).stdout.strip()
    moved = lar("memory", "add", "I live in Porto.", home=lar_home).stdout.strip()
    assert moved.endswith(f"(new version of {city})")
    bad = lar("memory", "add", "The server runs as pid 4412.", home=lar_home)
    assert bad.returncode == 1 and "not stored: holds a process id" in bad.stderr
    wrong = lar("memory", "add", "x y z", "--type", "opinion", home=lar_home)
    assert wrong.returncode == 2 and "--type must be one of preference" in wrong.stderr
    listed = lar("memory", "list", home=lar_home).stdout
    assert "I prefer green tea." in listed and "Porto" in listed and "Lisbon" not in listed
    assert "Lisbon" in lar("memory", "list", "--all", home=lar_home).stdout
    found = lar("memory", "search", "what should I drink?", home=lar_home).stdout
    assert tea_id in found and "Porto" not in found
    assert (
        "nothing recalled"
        in lar("memory", "search", "quantum chromodynamics", home=lar_home).stdout
    )
    l2 = (lar_home / "memory" / "L2_facts.md").read_text()
    assert f"I prefer green tea. <!-- {tea_id} -->" in l2
    assert lar("memory", "forget", tea_id, home=lar_home).returncode == 0
    assert tea_id not in (lar_home / "memory" / "L2_facts.md").read_text()
    missing = lar("memory", "forget", "m_000000000000", home=lar_home)
    assert missing.returncode == 1 and "no memory 'm_000000000000'" in missing.stderr


def test_export_then_import_into_another_home(lar_home: Path, tmp_path: Path) -> None:
    for text in ("I prefer green tea.", "My sister Ana lives in Braga.", "I work at Tidewell."):
        assert lar("memory", "add", text, home=lar_home).returncode == 0
    out = tmp_path / "mem.jsonl"
    assert lar("memory", "export", str(out), home=lar_home).returncode == 0
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "lar-memory/1" and len(lines) == 4
    other = tmp_path / "other"
    other.mkdir()
    first = lar("memory", "import", str(out), home=other)
    assert first.returncode == 0 and "imported 3 records (0 skipped)" in first.stdout
    second = lar("memory", "import", str(out), home=other)
    assert "imported 0 records (3 skipped)" in second.stdout
    assert lar("memory", "verify", home=other).returncode == 0
    # a bad line stops the import before anything is stored
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[0] + "\n" + lines[1] + "\n{not json\n")
    third = tmp_path / "third"
    third.mkdir()
    result = lar("memory", "import", str(broken), home=third)
    assert result.returncode == 1 and f"{broken}:3: invalid JSON" in result.stderr
    assert "I prefer" not in lar("memory", "list", home=third).stdout


def test_consolidate_uses_the_model_and_archives(lar_home: Path) -> None:
    with MockOpenAIServer(
        [text_reply("Noted."), text_reply("The user talked about tea.\nFACTS:\n- none")]
    ) as mock:
        configure_mock(lar_home, mock.url)
        run = lar("run", "I prefer green tea over coffee.", home=lar_home)
        assert run.returncode == 0, run.stderr
        assert "memory: stored" in run.stderr and "recall: 0 memories, " in run.stderr
        nothing = lar("memory", "consolidate", home=lar_home)
        assert "nothing to consolidate" in nothing.stdout  # not idle for 5 minutes yet
        done = lar("memory", "consolidate", "--all", home=lar_home)
        assert done.returncode == 0, done.stderr
        assert "2 turns, 0 facts" in done.stdout and "L4_archive" in done.stdout
    archives = list((lar_home / "memory" / "L4_archive").glob("*.md"))
    assert len(archives) == 1 and "I prefer green tea over coffee." in archives[0].read_text()


def test_prompt_shows_the_split_and_the_recalled_memory(lar_home: Path) -> None:
    lar("memory", "add", "I prefer green tea.", "--type", "preference", home=lar_home)
    out = lar("prompt", "--estimate", "What should I drink?", home=lar_home)
    assert out.returncode == 0, out.stderr
    assert "- I prefer green tea. (" in out.stdout  # recalled into the system prompt
    for part in ("system", "history", "memory", "tools"):
        assert f"│ {part}" in out.stdout
    assert "counted by estimate" in out.stdout
    # lar prompt stores nothing: no recall log, no statement
    db = sqlite3.connect(lar_home / "lar.db")
    assert db.execute("SELECT count(*) FROM memory_recalls").fetchone()[0] == 0
    lar("prompt", "--estimate", "I live in Porto.", home=lar_home)
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_add_takes_the_framing_off_and_types_what_you_state(lar_home: Path, tmp_path: Path) -> None:
    said = {
        "Remember that I prefer green tea": ("preference", "I prefer green tea."),
        "please note: my badge number is 4471": ("fact", "My badge number is 4471."),
        "I live in Lisbon.": ("fact", "I live in Lisbon."),
    }
    for text in said:
        assert lar("memory", "add", text, home=lar_home).returncode == 0
    out = tmp_path / "mem.jsonl"
    assert lar("memory", "export", str(out), home=lar_home).returncode == 0
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert sorted((r["type"], r["content"]) for r in records) == sorted(said.values())
    # an explicit --type still wins
    assert lar("memory", "add", "I like jazz", "--type", "fact", home=lar_home).returncode == 0
    assert lar("memory", "export", str(out), home=lar_home).returncode == 0
    added = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert ("fact", "I like jazz.") in [(r["type"], r["content"]) for r in added]


def test_add_at_a_date_keeps_it(lar_home: Path, tmp_path: Path) -> None:
    from datetime import datetime

    added = lar(
        "memory",
        "add",
        "--at",
        "2023-05-07",
        "I ran a charity race for mental health.",
        home=lar_home,
    )
    assert added.returncode == 0, added.stderr
    assert "2023-05-07" in lar("memory", "list", home=lar_home).stdout
    out = tmp_path / "mem.jsonl"
    assert lar("memory", "export", str(out), home=lar_home).returncode == 0
    row = json.loads(out.read_text().splitlines()[1])
    assert row["created"] == datetime(2023, 5, 7).timestamp()
    # "last week", as of a day in May 2023, is the week of the race
    found = lar(
        "memory", "search", "What did I do last week?", "--as-of", "2023-05-10", home=lar_home
    )
    assert added.stdout.strip() in found.stdout
    bad = lar("memory", "add", "--at", "last tuesday", "I ran a race.", home=lar_home)
    assert bad.returncode == 2 and "--at: 'last tuesday' is not a date" in bad.stderr


def test_search_says_why_nothing_came_back(lar_home: Path) -> None:
    empty = lar("memory", "search", "where do I live?", home=lar_home)
    assert "nothing recalled: nothing is stored yet" in empty.stdout
    city = lar("memory", "add", "I live in Lisbon.", home=lar_home).stdout.strip()
    far = lar("memory", "search", "quantum chromodynamics", home=lar_home).stdout
    assert "nothing recalled: none of the 1 current memories is close enough" in far
    assert f"the best, {city}, has cosine" in far and "below the threshold 0.25" in far
    lar("memory", "forget", city, home=lar_home)
    gone = lar("memory", "search", "where do I live?", home=lar_home).stdout
    assert "none of the 1 stored memories is current" in gone


def test_import_a_dated_conversation(lar_home: Path, tmp_path: Path) -> None:
    turns = [
        ("Caroline", "How did your family handle the accident?", "2023-05-08 13:56"),
        ("Melanie", "We stayed calm and the kids were fine, luckily.", "2023-05-08 13:57"),
        ("Caroline", "I started painting again last week.", "2023-06-20 10:00"),
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text(
        "".join(
            json.dumps({"speaker": s, "text": t, "at": at, "session": at[:10]}) + "\n"
            for s, t, at in turns
        )
    )
    done = lar("memory", "import", str(path), home=lar_home)
    assert done.returncode == 0, done.stderr
    assert "imported 3 records (0 already known), dated 2023-05-08 to 2023-06-20" in done.stdout
    again = lar("memory", "import", str(path), home=lar_home)
    assert "imported 0 records (3 already known)" in again.stdout
    out = tmp_path / "mem.jsonl"
    assert lar("memory", "export", str(out), home=lar_home).returncode == 0
    ids = {
        json.loads(line).get("content", "")[:7]: json.loads(line).get("id")
        for line in out.read_text().splitlines()[1:]
    }
    # the reply is found by the words of the question it answers, with the question
    found = lar(
        "memory",
        "search",
        "How did Melanie's family handle the accident?",
        "--k",
        "2",
        "--as-of",
        "2023-07-01",
        home=lar_home,
    ).stdout
    assert ids["Melanie"] in found
    listed = lar("memory", "list", home=lar_home).stdout
    assert "2023-05-08" in listed and "2023-06-20" in listed
    # old dates are data: the retention job keeps them (retention counts from the import)
    assert "expired 0 records" in lar("memory", "expire", home=lar_home).stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"text": "Fine line.", "at": "2023-01-02"})
        + "\n"
        + json.dumps({"text": "Bad date.", "at": "soon"})
        + "\n"
    )
    result = lar("memory", "import", str(bad), home=lar_home)
    assert result.returncode == 1 and f"{bad}: line 2: 'at': 'soon' is not a date" in result.stderr
    assert "Fine line" not in lar("memory", "list", home=lar_home).stdout
