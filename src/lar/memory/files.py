"""The layered memory files (M7, GenericAgent's L0–L4), kept in step with lar.db.

``$LAR_HOME/memory/``:

- ``L0_rules.md``  the memory rules (written once; yours to read and edit)
- ``L1_index.md``  the index injected into every prompt (≤ 30 lines)
- ``L2_facts.md``  current preferences and facts, one per line, each tagged with its id
- ``L3_skills.md`` skills: how-tos that worked
- ``L4_archive/``  archived sessions (raw turns and their summary), one file per session

L1–L3 are regenerated from the database after every change, in a stable order, so the folder
diffs well under git. Edits you make to ``L2_facts.md`` or ``L3_skills.md`` are imported back
the next time Lar opens its memory: a changed line becomes a new version of that memory, a
deleted line forgets it, and a new line under a heading becomes a new memory of that type.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lar.memory.store import MemoryRecord, MemoryStore, MemoryType

__all__ = ["MemoryFiles", "SyncReport", "L0_RULES"]

L0_RULES = """# L0 — memory rules

Lar follows these rules for everything it remembers (SPEC M4, "No Execution, No Memory").

1. A memory comes only from something you said yourself, or from a tool result that succeeded
   in the same task. A failed tool, a guess or the model's own claim never becomes a memory.
2. One fact per memory, in one sentence. No whole conversations (those are archived in L4).
3. Nothing that will not stay true: no timestamps, process ids, temporary paths or ports.
4. Nothing secret: text holding a configured secret or a key is refused.
5. A near-duplicate is merged into the memory it repeats; a changed fact becomes a new version
   of the old one. Nothing is overwritten: every version and every action is in the audit log,
   and the records are hash-chained (`lar memory verify`).
6. Memories fade by type (preferences slowest, tasks fastest) and expire after their retention
   (preference 180 days, fact 90, task 7, episode 365; configurable).

Edit L2_facts.md or L3_skills.md to correct what Lar remembers; L1 and the sections below
each heading are regenerated from the database.
"""

_LINE = re.compile(r"^\s*[-*]\s+(?P<text>.+?)\s*(?:<!--\s*(?P<id>m_[0-9a-f]+)\s*-->)?\s*$")
_HEADINGS: dict[str, MemoryType] = {
    "preferences": "preference",
    "facts": "fact",
    "skills": "skill",
}


@dataclass(slots=True)
class SyncReport:
    added: int = 0
    changed: int = 0
    forgotten: int = 0

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.forgotten)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _atomic_write(path: Path, text: str) -> None:
    """Write private (0600, created so: never readable by others even for a moment)."""
    # A name of its own per write: sessions of one process (a server's) write the same file
    # from several threads, and a shared temporary name let one rename away another's file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _private_dir(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o077:
        folder.chmod(0o700)


class MemoryFiles:
    def __init__(
        self,
        store: MemoryStore,
        folder: Path,
        skill_lines: Callable[[], list[str]] | None = None,
    ) -> None:
        self.store = store
        self.folder = folder
        self.state_path = folder / ".sync.json"
        self.skill_lines = skill_lines
        """The installed skills, one line each, for L3 (lar.skills; read-only there)."""

    # --- import -----------------------------------------------------------------------------

    def _state(self) -> dict[str, str]:
        try:
            data = json.loads(self.state_path.read_text())
            return {str(k): str(v) for k, v in data.get("files", {}).items()}
        except (OSError, ValueError, AttributeError):
            return {}

    def import_edits(self) -> SyncReport:
        """Apply the user's edits of L2/L3 (if the files changed since Lar wrote them)."""
        report = SyncReport()
        written = self._state()
        for name in ("L2_facts.md", "L3_skills.md"):
            path = self.folder / name
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if written.get(name) == _sha(text):
                continue  # untouched since Lar wrote it
            self._apply(text, report)
        return report

    def _apply(self, text: str, report: SyncReport) -> None:
        current = {
            r.id: r for r in self.store.records() if r.type in ("preference", "fact", "skill")
        }
        section: MemoryType | None = None
        seen: set[str] = set()
        listed_types: set[str] = set()
        for raw in text.splitlines():
            if raw.startswith("#"):
                section = _HEADINGS.get(raw.lstrip("#").strip().lower())
                if section:
                    listed_types.add(section)
                continue
            m = _LINE.match(raw)
            if not m or section is None:
                continue
            content, mid = m["text"].strip(), m["id"]
            if mid and mid in current:
                seen.add(mid)
                if content != current[mid].content:
                    self.store.add(
                        content,
                        type=current[mid].type,  # type: ignore[arg-type]
                        source="file",
                        supersedes=mid,
                        actor="file",
                    )
                    report.changed += 1
            elif not mid:
                self.store.add(content, type=section, source="file", actor="file")
                report.added += 1
        for mid, record in current.items():
            if record.type in listed_types and mid not in seen:
                self.store.forget(mid, actor="file")
                report.forgotten += 1

    # --- export -----------------------------------------------------------------------------

    def _audit_mark(self) -> int:
        row = self.store.db.execute("SELECT max(seq) FROM memory_audit").fetchone()
        return int(row[0] or 0)

    def export(self, index_lines: list[str] | None = None, *, force: bool = False) -> None:
        """Regenerate L0 (if missing), L1, L2 and L3 from the database.

        Skipped when nothing was audited since the last export (every change is audited), so
        a run that stored nothing does not rewrite large files."""
        mark = self._audit_mark()
        installed = self.skill_lines() if self.skill_lines is not None else []
        skills_mark = _sha("\n".join(installed))
        written = self._written_marks()
        same = written == (mark, skills_mark)
        if not force and same and (self.folder / "L2_facts.md").exists():
            return
        if index_lines is None:
            index_lines = []
        _private_dir(self.folder)
        rules = self.folder / "L0_rules.md"
        if not rules.exists():
            _atomic_write(rules, L0_RULES)
        records = self.store.records()
        files = {
            "L1_index.md": "# L1 — index (in every prompt)\n\n"
            + "".join(f"- {line}\n" for line in index_lines),
            "L2_facts.md": self._listing(
                "# L2 — facts\n\nOne memory per line; edit, delete or add lines to correct them.",
                [("Preferences", "preference"), ("Facts", "fact")],
                records,
            ),
            "L3_skills.md": self._listing(
                "# L3 — skills\n\nHow-tos that worked, one per line.",
                [("Skills", "skill")],
                records,
            )
            + (
                "\n## Installed skills\n\nManaged with `lar skill` (edits here are not read).\n\n"
                + "".join(f"- {line}\n" for line in installed)
                if installed
                else ""
            ),
        }
        hashes = {}
        for name, text in files.items():
            path = self.folder / name
            try:
                same = path.read_text(encoding="utf-8", errors="replace") == text
            except OSError:
                same = False
            if not same:
                _atomic_write(path, text)
            hashes[name] = _sha(text)
        state = {"files": hashes, "audit_seq": mark, "skills": skills_mark}
        _atomic_write(self.state_path, json.dumps(state, indent=1) + "\n")

    def _written_marks(self) -> tuple[int, str]:
        """The audit mark and the skills' hash the files were last written for."""
        try:
            state = json.loads(self.state_path.read_text())
            return int(state.get("audit_seq", -1)), str(state.get("skills", _sha("")))
        except (OSError, ValueError, AttributeError, TypeError):
            return -1, ""

    @staticmethod
    def _listing(head: str, sections: list[tuple[str, str]], records: list[MemoryRecord]) -> str:
        out = [head]
        for title, mtype in sections:
            out.append(f"\n## {title}\n")
            for r in records:
                if r.type == mtype:
                    content = " ".join(r.content.split())
                    out.append(f"- {content} <!-- {r.id} -->")
        return "\n".join(out) + "\n"

    def archive(self, session_id: str, summary: str, turns: list[tuple[str, str, float]]) -> Path:
        """Write one session's raw turns and summary to L4_archive/ (kept, never regenerated)."""
        folder = self.folder / "L4_archive"
        _private_dir(folder)
        first = turns[0][2] if turns else time.time()
        day = time.strftime("%Y-%m-%d", time.localtime(first))
        path = folder / f"{day}_{session_id}.md"
        lines = [f"# Session {session_id} ({day})", "", f"Summary: {summary}", ""]
        for role, content, at in turns:
            when = time.strftime("%H:%M", time.localtime(at))
            lines.append(f"**{role}** ({when}): {content}")
            lines.append("")
        previous = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        _atomic_write(path, previous + "\n".join(lines))
        return path
