"""Consolidation (M5): a finished stretch of conversation becomes a summary, facts and an archive.

A session's turns are logged as they happen (``memory_turns``). When a session has been idle for
5 minutes, or has gathered 20 unconsolidated turns, its turns are consolidated: the model writes
a short summary (stored as an ``episode`` memory), the user's own statements in those turns pass
through the write policy again (so nothing said before the policy saw it is lost), the model is
asked for further facts the user stated — each kept only if the user's words support it — and
the raw turns are archived to ``L4_archive/``. Without a model, the summary is the first request.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from lar.memory.agent_memory import AgentMemory
from lar.memory.files import MemoryFiles
from lar.memory.policy import supported, user_statements, volatile

__all__ = ["TURNS_SCHEMA", "log_turn", "due_sessions", "consolidate", "Consolidated"]

log = logging.getLogger("lar.memory")

IDLE_S = 300.0
MAX_TURNS = 20

TURNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    at REAL NOT NULL,
    consolidated INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS memory_turns_open ON memory_turns (consolidated, session_id);
"""

Summarize = Callable[[str], Awaitable[str]]
"""Sends one prompt to the model and returns its text."""


@dataclass(slots=True)
class Consolidated:
    session_id: str
    turns: int
    summary: str
    facts: list[str]
    archive: str


_WORD = re.compile(r"\w+")


def end_turn(memory: AgentMemory, text: str, answer: str, note: str) -> None:
    """After a run: log the answer, keep the task's note as working memory, sync the files."""
    log_turn(memory, "assistant", answer)
    memory.save_working(text, answer, note)
    memory.sync_files()


def log_turn(memory: AgentMemory, role: str, content: str) -> None:
    memory.store.db.executescript(TURNS_SCHEMA)
    memory.store.db.execute(
        "INSERT INTO memory_turns (session_id, role, content, at) VALUES (?, ?, ?, ?)",
        (memory.session_id, role, memory.redact(content), time.time()),
    )


def due_sessions(
    memory: AgentMemory, *, now: float | None = None, force: bool = False
) -> list[str]:
    """Sessions idle for 5 minutes or with 20 open turns (all open ones with ``force``)."""
    memory.store.db.executescript(TURNS_SCHEMA)
    now = time.time() if now is None else now
    rows = memory.store.db.execute(
        "SELECT session_id, count(*), max(at) FROM memory_turns WHERE consolidated = 0 "
        "GROUP BY session_id ORDER BY min(seq)"
    ).fetchall()
    return [sid for sid, n, last in rows if force or n >= MAX_TURNS or now - last >= IDLE_S]


_SUMMARY_PROMPT = (
    "Summarize this conversation between a user and an assistant in at most two sentences. "
    "Then, under the line FACTS:, list facts the user stated about themselves, one per line "
    "starting with '- ', in the user's words; write '- none' if there are none.\n\n"
)


async def consolidate(
    memory: AgentMemory, session_id: str, summarize: Summarize | None, files: MemoryFiles | None
) -> Consolidated | None:
    db = memory.store.db
    rows = db.execute(
        "SELECT seq, role, content, at FROM memory_turns WHERE session_id = ? AND consolidated = 0 "
        "ORDER BY seq",
        (session_id,),
    ).fetchall()
    if not rows:
        return None
    turns = [(role, content, at) for _, role, content, at in rows]
    user_text = [content for role, content, _ in turns if role == "user"]
    transcript = "\n".join(f"{role}: {content}" for role, content, _ in turns)
    summary, model_facts = "", []
    if summarize is not None:
        try:
            reply = await summarize(_SUMMARY_PROMPT + transcript[-6000:])
            head, _, tail = reply.partition("FACTS:")
            summary = " ".join(head.split())
            model_facts = [
                line.strip()[2:].strip()
                for line in tail.splitlines()
                if line.strip().startswith("- ") and line.strip()[2:].strip().lower() != "none"
            ]
        except Exception as exc:  # noqa: BLE001 - a failed summary must not lose the turns
            log.warning(
                "consolidation of %s: the model failed (%s); archiving without it", session_id, exc
            )
    if not summary:
        summary = (user_text[0] if user_text else turns[0][1])[:200]
    facts: list[str] = []
    old_session = memory.session_id
    memory.session_id = session_id
    statements = [st for text in user_text for st in user_statements(text)]
    stated = [set(_WORD.findall(st.content.casefold())) for st in statements]
    try:
        for st in statements:
            written = memory.write(st.content, st.type, source=f"consolidation:{session_id}")
            if written.action in ("stored", "superseded"):
                facts.append(st.content)
        for fact in model_facts:
            # The model's reading counts only where the user's own words support it.
            if volatile(fact) or not supported(fact, user_text, share=0.7):
                continue
            # Said already, in more words, by one of the user's statements (stored as said):
            # "My friend Tomás is coming to Kyoto." after "… coming to Kyoto with me." was a
            # second memory of one fact wherever no embedder could see them as one.
            if any(set(_WORD.findall(fact.casefold())) <= words for words in stated):
                continue
            if memory.write(fact, "fact", source=f"consolidation:{session_id}").action in (
                "stored",
                "superseded",
            ):
                facts.append(fact)
        episode = memory.store.add(
            f"Session summary: {summary}",
            type="episode",
            source=f"consolidation:{session_id}",
            actor="consolidation",
            session_id=session_id,
            created=turns[-1][2],
        )
    finally:
        memory.session_id = old_session
    archive = ""
    if files is not None:
        archive = str(files.archive(session_id, summary, turns))
    marks = ",".join("?" * len(rows))
    db.execute(
        f"UPDATE memory_turns SET consolidated = 1 WHERE seq IN ({marks})", [r[0] for r in rows]
    )
    log.info("consolidated %s: %d turns, episode %s", session_id, len(rows), episode)
    return Consolidated(session_id, len(rows), summary, facts, archive)
