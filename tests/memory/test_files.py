"""The L0–L4 files: regenerated from the database, and the user's edits imported back (M7)."""

from __future__ import annotations

from pathlib import Path

from lar.memory.agent_memory import AgentMemory
from lar.memory.files import MemoryFiles
from lar.memory.store import MemoryStore, NewMemory


def open_memory(home: Path) -> AgentMemory:
    store = MemoryStore(home / "lar.db")
    return AgentMemory(store, files=MemoryFiles(store, home / "memory"))


def test_files_mirror_the_database(tmp_path: Path) -> None:
    mem = open_memory(tmp_path)
    tea = mem.write("I prefer green tea.", "preference", source="user").memory_id
    job = mem.write("I work at Tidewell as a backend engineer.", "fact", source="user").memory_id
    mem.write("To deploy, run make release.", "skill", source="user")
    mem.sync_files()
    folder = tmp_path / "memory"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [
        "L0_rules.md",
        "L1_index.md",
        "L2_facts.md",
        "L3_skills.md",
    ]
    l2 = (folder / "L2_facts.md").read_text()
    assert f"- I prefer green tea. <!-- {tea} -->" in l2.split("## Facts")[0]
    assert f"- I work at Tidewell as a backend engineer. <!-- {job} -->" in l2.split("## Facts")[1]
    assert "make release" in (folder / "L3_skills.md").read_text()
    index = (folder / "L1_index.md").read_text().splitlines()
    assert "- prefer green tea" in index and len([x for x in index if x.startswith("- ")]) <= 30
    before = (folder / "L2_facts.md").stat().st_mtime_ns
    mem.sync_files()  # nothing changed: the file is not rewritten (clean git diffs)
    assert (folder / "L2_facts.md").stat().st_mtime_ns == before
    mem.store.close()


def test_user_edits_are_imported_as_versions_forgets_and_additions(tmp_path: Path) -> None:
    mem = open_memory(tmp_path)
    tea = mem.write("I prefer green tea.", "preference", source="user").memory_id
    job = mem.write("I work at Tidewell.", "fact", source="user").memory_id
    city = mem.write("I live in Lisbon.", "fact", source="user").memory_id
    mem.sync_files()
    mem.store.close()
    path = tmp_path / "memory" / "L2_facts.md"
    text = path.read_text()
    text = text.replace("I live in Lisbon.", "I live in Porto.")  # changed
    text = text.replace(f"- I work at Tidewell. <!-- {job} -->\n", "")  # deleted
    text = text.replace("## Facts\n", "## Facts\n\n- My sister is called Ana.\n")  # added
    path.write_text(text)
    mem = open_memory(tmp_path)  # imports on open
    current = {r.content: r for r in mem.store.records()}
    assert set(current) == {"I prefer green tea.", "I live in Porto.", "My sister is called Ana."}
    assert current["I live in Porto."].supersedes == city
    assert current["I prefer green tea."].id == tea
    actions = [(a[1], a[2]) for a in mem.store.audit()][3:]
    assert sorted(actions) == [("file", "add"), ("file", "forget"), ("file", "supersede")]
    assert mem.store.verify() == []
    # and the file now shows ids for every line again
    assert "- My sister is called Ana. <!-- m_" in path.read_text()
    mem.store.close()
    # opening again changes nothing
    mem = open_memory(tmp_path)
    assert len(mem.store.audit()) == 6
    mem.store.close()


def test_retention_job_expires_and_audits(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "lar.db", retention={"task": 7})
    import time

    task = store.add("Buy milk.", type="task")
    keep = store.add("The bakery closes at noon on Sundays.", type="fact")
    assert store.expire() == []
    # Retention counts from when Lar stored the record: a week and a day later the task goes.
    assert store.expire(now=time.time() + 8 * 86400) == [task]
    assert [r.id for r in store.records()] == [keep]
    assert store.audit()[-1][1:4] == ("retention", "expire", task)
    store.close()


def test_an_archive_imported_with_old_dates_is_kept_and_recalled_as_of_its_end(
    tmp_path: Path,
) -> None:
    from datetime import datetime

    from lar.memory.recall import recall

    store = MemoryStore(tmp_path / "lar.db")
    may = datetime(2023, 5, 8, 13, 56).timestamp()
    items = [
        NewMemory("Caroline: I went to a support group yesterday.", "episode", created=may),
        NewMemory("Melanie: We went camping at the beach.", "episode", created=may + 60),
    ]
    ids = store.add_many(items, actor="import")
    store.close()
    # Opening the memory (as every lar command does) expires nothing.
    mem = open_memory(tmp_path)
    assert mem.store.expire() == []
    assert [r.id for r in mem.store.records()] == ids
    end = datetime(2023, 10, 1).timestamp()
    found = recall(mem.store, "Where did Melanie go camping?", now=end, log_it=False)
    assert [r.record.id for r in found] == [ids[1]]
    assert found[0].record.created == round(may + 60, 6)
    assert not [a for a in mem.store.audit() if a[2] == "expire"]
    mem.store.close()
