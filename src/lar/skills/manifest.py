"""What a skill is once read (K1, K2): its frontmatter, body, files and executable steps."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lar.errors import LarError

__all__ = [
    "NAME_RE",
    "Problem",
    "Skill",
    "SkillError",
    "SkillStep",
    "name_problem",
    "short_line",
    "tool_name",
]

RESOURCE_DIRS = ("scripts", "references", "templates", "assets")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
"""The agentskills.io name: lowercase letters and digits in words joined by single hyphens.
A skill's name is also its folder under ``$LAR_HOME/skills/``, so nothing else is accepted."""
NAME_MAX = 64
RESERVED_NAMES = frozenset({"trusted_keys", "skills.lock", "skills.tmp"})
"""What else lives in ``$LAR_HOME/skills/`` (none matches ``NAME_RE``; kept as a second wall)."""


class SkillError(LarError):
    """A skill cannot be loaded, installed or trusted; ``problems`` say where and why."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in a skill's files: where (file and 1-based line, 0 when none) and what."""

    file: Path
    line: int
    message: str
    severity: Literal["warning", "error"] = "warning"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True, slots=True)
class SkillStep:
    """One executable step: call a tool or another skill with arguments rendered from a
    template, and keep the result under ``output`` for later steps."""

    tool: str = ""
    skill: str = ""
    arguments: Any = field(default_factory=dict)
    """A mapping whose string values are templates, or one template rendering to JSON."""
    output: str = ""
    line: int = 0

    @property
    def target(self) -> str:
        return self.skill or self.tool


@dataclass(slots=True)
class Skill:
    """A SKILL.md folder as read. Unknown frontmatter keys stay in ``frontmatter``."""

    name: str
    description: str
    folder: Path
    body: str
    frontmatter: dict[str, Any]
    body_line: int = 1
    """The SKILL.md line the body starts on."""
    steps: list[SkillStep] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def file(self) -> Path:
        return self.folder / "SKILL.md"

    @property
    def version(self) -> str:
        value = self.frontmatter.get("version") or _lar_meta(self.frontmatter).get("version")
        return str(value) if value is not None else ""

    @property
    def tool_name(self) -> str:
        return tool_name(self.name)

    def resources(self) -> dict[str, list[str]]:
        """Files under scripts/, references/, templates/ and assets/, relative to the folder."""
        found: dict[str, list[str]] = {}
        for kind in RESOURCE_DIRS:
            root = self.folder / kind
            if root.is_dir():
                files = sorted(
                    p.relative_to(self.folder).as_posix()
                    for p in root.rglob("*")
                    if p.is_file() and not p.is_symlink()
                )
                if files:
                    found[kind] = files
        return found

    def short(self, limit: int = 90) -> str:
        """The description's first sentence, at most ``limit`` characters: the prompt line."""
        return short_line(self.description, limit)


def short_line(description: str, limit: int = 90) -> str:
    text = " ".join(description.split())
    for end in (". ", "; ", " — "):
        cut = text.find(end)
        if 0 < cut < limit:
            text = text[: cut + (1 if end == ". " else 0)]
            break
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a skill's name (and so its folder), or None when it can."""
    if not name:
        return "a skill's name is empty"
    if len(name) > NAME_MAX or not NAME_RE.fullmatch(name) or name in RESERVED_NAMES:
        shown = name if len(name) <= 80 else name[:80] + "…"
        return (
            f"name {shown!r} is not a valid skill name: 1-{NAME_MAX} lowercase letters, digits "
            "and single hyphens (it is also the skill's folder)"
        )
    return None


def tool_name(skill_name: str) -> str:
    return "skill_" + "".join(c if c.isalnum() else "_" for c in skill_name.lower())


def _lar_meta(frontmatter: dict[str, Any]) -> dict[str, Any]:
    meta = frontmatter.get("metadata")
    lar = meta.get("lar") if isinstance(meta, dict) else None
    return lar if isinstance(lar, dict) else {}
