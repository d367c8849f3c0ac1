"""Consolidation (M5): idle or long sessions become a summary, facts and an L4 archive."""

from __future__ import annotations

import time
from pathlib import Path

from lar.agents.agent import Agent
from lar.engines.scripted import ScriptedEngine
from lar.memory.agent_memory import AgentMemory
from lar.memory.consolidate import MAX_TURNS, due_sessions
from lar.memory.files import MemoryFiles
from lar.memory.store import MemoryStore
from lar.types import Notice


def open_memory(home: Path) -> AgentMemory:
    store = MemoryStore(home / "lar.db")
    return AgentMemory(store, files=MemoryFiles(store, home / "memory"))


SUMMARY = (
    "The user planned a trip to Kyoto and talked about food.\n"
    "FACTS:\n- My friend Tomás is coming to Kyoto.\n- The user is a famous astronaut.\n"
)


def test_consolidation_summarizes_keeps_supported_facts_and_archives(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Sounds great!", "Enjoy!", SUMMARY])
    agent = Agent(engine=engine, memory=open_memory(tmp_path), session_id="s_trip")
    agent.run("I'm going to Kyoto in April. My friend Tomás is coming to Kyoto with me.")
    agent.run("Any food tips?")
    assert agent.memory is not None
    assert due_sessions(agent.memory) == []  # neither idle nor long yet
    done = agent.consolidate(force=True)
    assert len(done) == 1 and done[0].turns == 4
    assert done[0].summary == "The user planned a trip to Kyoto and talked about food."
    store = agent.memory.store
    contents = [r.content for r in store.records()]
    # the statement was stored at run time; the model's "astronaut" is not in the user's words
    assert "My friend Tomás is coming to Kyoto with me." in contents
    assert "My friend Tomás is coming to Kyoto." not in contents  # said already: no second copy
    assert not any("astronaut" in c for c in contents)
    assert "Session summary: The user planned a trip to Kyoto and talked about food." in contents
    archive = Path(done[0].archive)
    assert archive.parent.name == "L4_archive" and "s_trip" in archive.name
    text = archive.read_text()
    assert "**user**" in text and "Any food tips?" in text and "**assistant**" in text
    assert agent.consolidate(force=True) == []  # turns are consolidated once
    agent.close()


def test_a_session_is_due_after_twenty_turns_or_five_idle_minutes(tmp_path: Path) -> None:
    replies = ["ok"] * (MAX_TURNS // 2) + ["Short summary.\nFACTS:\n- none", "ok"]
    engine = ScriptedEngine(replies)
    agent = Agent(engine=engine, memory=open_memory(tmp_path), session_id="s_long")
    for i in range(MAX_TURNS // 2):
        result = agent.run(f"message {i}")
        assert not [e for e in result.events if isinstance(e, Notice)]
    result = agent.run("one more")  # 20 open turns: consolidated before this run
    notes = [e.message for e in result.events if isinstance(e, Notice)]
    assert notes == ["memory: consolidated 20 turns (0 facts)"]
    assert agent.memory is not None
    mem = agent.memory
    later = time.time() + 301
    assert due_sessions(mem, now=later) == ["s_long"]  # idle five minutes
    agent.close()


def test_a_failing_model_still_archives_the_turns(tmp_path: Path) -> None:
    from lar.errors import EngineError

    engine = ScriptedEngine(["Noted.", EngineError("m", "down")])
    agent = Agent(engine=engine, memory=open_memory(tmp_path), session_id="s_x")
    agent.run("I live in Porto.")
    done = agent.consolidate(force=True)
    assert done[0].summary == "I live in Porto." and Path(done[0].archive).exists()
    agent.close()
