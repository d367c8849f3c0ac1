"""The memory tables in ``lar.db``: records, their stemmed full-text index, audit and recall log.

``store.MemoryStore`` creates them and brings older databases up to date (``_migrate``).
"""

from __future__ import annotations

__all__ = ["SCHEMA", "FTS_STATEMENTS"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    content TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    confidence REAL NOT NULL DEFAULT 1.0,
    created REAL NOT NULL,
    access_level TEXT NOT NULL DEFAULT 'private',
    retention_days INTEGER,
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    supersedes TEXT,
    superseded_by TEXT,
    forgotten INTEGER NOT NULL DEFAULT 0,
    prev_hash TEXT NOT NULL,
    chain_hash TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    speaker TEXT NOT NULL DEFAULT '',
    stored REAL
);
{fts}
CREATE TABLE IF NOT EXISTS memory_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE TRIGGER IF NOT EXISTS memory_audit_append_only BEFORE UPDATE ON memory_audit BEGIN
    SELECT RAISE(ABORT, 'the memory audit log is append-only');
END;
CREATE TRIGGER IF NOT EXISTS memory_audit_no_delete BEFORE DELETE ON memory_audit BEGIN
    SELECT RAISE(ABORT, 'the memory audit log is append-only');
END;
CREATE INDEX IF NOT EXISTS memories_created ON memories (created);
CREATE TABLE IF NOT EXISTS memory_recalls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    query TEXT NOT NULL,
    window TEXT NOT NULL DEFAULT '',
    results TEXT NOT NULL
);
"""


# The words of a memory and of the turn it answers, stemmed (Porter: "volunteering" finds
# "volunteered"); the context column is weighed less in ranking (recall.CONTEXT_WEIGHT).
FTS_STATEMENTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(content, context, "
    "content='memories', content_rowid='seq', tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_vocab USING fts5vocab(memories_fts, 'row')",
    "CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts(rowid, content, context) VALUES (new.seq, new.content, "
    "new.context); END",
)
FTS = "".join(f"{statement};\n" for statement in FTS_STATEMENTS)
SCHEMA = SCHEMA.replace("{fts}", FTS)
