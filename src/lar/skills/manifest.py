"""What a skill is once read (K1, K2): its frontmatter, body, files and executable steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lar.errors import LarError

__all__ = ["Problem", "Skill", "SkillError", "SkillStep", "short_line", "tool_name"]

RESOURCE_DIRS = ("scripts", "references", "templates", "assets")


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


def tool_name(skill_name: str) -> str:
    return "skill_" + "".join(c if c.isalnum() else "_" for c in skill_name.lower())


def _lar_meta(frontmatter: dict[str, Any]) -> dict[str, Any]:
    meta = frontmatter.get("metadata")
    lar = meta.get("lar") if isinstance(meta, dict) else None
    return lar if isinstance(lar, dict) else {}
