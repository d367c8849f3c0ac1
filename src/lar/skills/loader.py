"""Read SKILL.md folders as the world writes them (K1).

The agentskills.io format is YAML frontmatter between ``---`` fences, then Markdown. Real skills
bend it: JSON written inside YAML, flow mappings with trailing commas, block scalars, names that
differ from their folder, descriptions over the 1,024-character limit, a colon in an unquoted
value that strict YAML refuses. Lar reads what it can, keeps every key (``metadata.hermes``,
``metadata.openclaw``, ``metadata.clawdbot`` …), and reports each departure by file and line. Only
a file whose frontmatter cannot be found at all, or that names no skill and says nothing of what
it does, is refused; that is reported too, never dropped in silence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lar.safe_yaml import YamlError, YamlTooComplex, load_yaml
from lar.skills.manifest import Problem, Skill, SkillError, SkillStep, name_problem

__all__ = ["LoadResult", "load_skill", "scan_folder"]

_KEY_LINE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")
_OUTPUT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(slots=True)
class LoadResult:
    """One SKILL.md: the skill when it loaded (perhaps with warnings), and every problem."""

    file: Path
    skill: Skill | None
    problems: list[Problem]

    @property
    def outcome(self) -> str:
        if self.skill is None:
            return "refused"
        return "warnings" if self.problems else "ok"


def load_skill(folder: Path) -> Skill:
    """The skill in ``folder``; raises ``SkillError`` naming the file and line when it cannot be
    read. Warnings are kept on ``Skill.problems``."""
    result = _read(folder / "SKILL.md")
    if result.skill is None:
        errors = "; ".join(str(p) for p in result.problems)
        raise SkillError(f"not a usable skill: {errors}", result.problems)
    return result.skill


def scan_folder(root: Path) -> list[LoadResult]:
    """Every SKILL.md under ``root`` (at any depth, in path order), loaded or refused."""
    files = [root / "SKILL.md"] if (root / "SKILL.md").is_file() else sorted(root.rglob("SKILL.md"))
    return [_read(f) for f in files]


def _read(file: Path) -> LoadResult:
    # One skill that is too deep to read is that skill's problem, not the whole pack's.
    try:
        return _load(file)
    except RecursionError:
        problem = Problem(file, 0, "nested too deeply to read", "error")
        return LoadResult(file, None, [problem])


def _load(file: Path) -> LoadResult:
    problems: list[Problem] = []

    def note(line: int, message: str, severity: str = "warning") -> None:
        problems.append(Problem(file, line, message, severity))  # type: ignore[arg-type]

    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        note(0, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "error")
        return LoadResult(file, None, problems)
    except OSError as exc:
        note(0, f"cannot read: {exc.strerror or exc}", "error")
        return LoadResult(file, None, problems)
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or lines[start].rstrip() != "---":
        shown = lines[start][:60] if start is not None else "(empty file)"
        note(
            (start or 0) + 1,
            f"no YAML frontmatter: a SKILL.md starts with a line '---', this one with {shown!r}",
            "error",
        )
        return LoadResult(file, None, problems)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        note(start + 1, "the frontmatter opened here is never closed by a line '---'", "error")
        return LoadResult(file, None, problems)
    front_lines = lines[start + 1 : end]
    first = start + 2  # the file line of front_lines[0]
    front = _parse_front(front_lines, first, note, str(file))
    if front is None:
        return LoadResult(file, None, problems)
    body = "\n".join(lines[end + 1 :]).strip("\n")
    line_of = _key_lines(front_lines, first)
    name = _name(front, file.parent.name, line_of, note)
    description = _description(front, body, line_of, note)
    if name is None or description is None:
        return LoadResult(file, None, problems)
    _check_optional(front, line_of, note)
    steps = _steps(front, line_of.get("metadata", first), note)
    skill = Skill(name, description, file.parent, body, front, end + 2, steps, problems)
    return LoadResult(file, skill, problems)


def _parse_front(
    front_lines: list[str], first: int, note: Any, source: str
) -> dict[str, Any] | None:
    text = "\n".join(front_lines)
    try:
        data = load_yaml(text, source=source) if text.strip() else {}
    except YamlTooComplex as exc:
        note(first + max(exc.line - 1, 0), f"frontmatter refused: {exc.reason}", "error")
        return None
    except YamlError as exc:
        line = first + exc.line - 1 if exc.line else first
        reason = exc.reason.removeprefix("not valid YAML (").removesuffix(")")
        note(line, f"frontmatter is not strict YAML ({reason}); read it key by key instead")
        try:
            data = _key_by_key(front_lines, source)
        except YamlTooComplex as inner:
            note(first, f"frontmatter refused: {inner.reason}", "error")
            return None
    if not isinstance(data, dict):
        note(first, f"frontmatter is a {type(data).__name__}, not a mapping of keys", "error")
        return None
    return {str(k): v for k, v in data.items()}


def _key_by_key(front_lines: list[str], source: str) -> dict[str, Any]:
    """Top-level ``key: value`` lines, with indented lines belonging to the key above; each value
    is YAML where it parses on its own and plain text where it does not."""
    data: dict[str, Any] = {}
    key: str | None = None
    chunk: list[str] = []

    def flush() -> None:
        if key is None:
            return
        raw = "\n".join(chunk).strip()
        try:
            data[key] = load_yaml(raw, source=f"{source}: {key}") if raw else None
        except YamlTooComplex:
            raise
        except YamlError:
            data[key] = " ".join(raw.split())

    for line in front_lines:
        match = _KEY_LINE.match(line) if line[:1].strip() else None
        if match:
            flush()
            key, chunk = match.group(1), [match.group(2) or ""]
        elif key is not None:
            chunk.append(line)
    flush()
    return data


def _key_lines(front_lines: list[str], first: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for i, line in enumerate(front_lines):
        match = _KEY_LINE.match(line) if line[:1].strip() else None
        if match:
            found.setdefault(match.group(1), first + i)
    return found


def _name(front: dict[str, Any], folder: str, line_of: dict[str, int], note: Any) -> str | None:
    raw = front.get("name")
    line = line_of.get("name", 0)
    if raw is None or not str(raw).strip():
        if name_problem(folder) is None:
            note(line, f"no name; using the folder's, {folder!r}")
            return folder
        note(line, f"no name, and the folder name {folder!r} is not a valid one either", "error")
        return None
    name = str(raw).strip()
    problem = name_problem(name)
    if problem is not None:
        note(line, problem, "error")
        return None
    if name != folder:
        note(line, f"name {name!r} differs from its folder {folder!r}; Lar calls it {name!r}")
    return name


def _description(
    front: dict[str, Any], body: str, line_of: dict[str, int], note: Any
) -> str | None:
    raw = front.get("description")
    line = line_of.get("description", 0)
    if isinstance(raw, str) and raw.strip():
        text = raw.strip()
        if len(text) > 1024:
            note(line, f"description is {len(text)} characters (the limit is 1,024); kept whole")
        return text
    paragraph = next(
        (p.strip() for p in body.split("\n\n") if p.strip() and not p.lstrip().startswith("#")),
        "",
    )
    if paragraph:
        note(line, "no description; using the body's first paragraph")
        return " ".join(paragraph.split())
    note(line, "no description, and no body to take one from", "error")
    return None


def _check_optional(front: dict[str, Any], line_of: dict[str, int], note: Any) -> None:
    compat = front.get("compatibility")
    if isinstance(compat, str) and len(compat) > 500:
        note(
            line_of.get("compatibility", 0), f"compatibility is {len(compat)} characters (max 500)"
        )
    tools = front.get("allowed-tools")
    if isinstance(tools, str) and "," in tools:
        note(line_of.get("allowed-tools", 0), "allowed-tools is comma-separated (spec: spaces)")
    meta = front.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        note(line_of.get("metadata", 0), f"metadata is a {type(meta).__name__}, not a mapping")


def _steps(front: dict[str, Any], line: int, note: Any) -> list[SkillStep]:
    """``metadata.lar.steps``: the skill's executable steps (K2), checked here so that a bad one
    is reported at load rather than when the model first calls the skill."""
    meta = front.get("metadata")
    lar = meta.get("lar") if isinstance(meta, dict) else None
    raw = lar.get("steps") if isinstance(lar, dict) else None
    if raw is None:
        return []
    if not isinstance(raw, list):
        note(line, "metadata.lar.steps must be a list of steps", "error")
        return []
    steps: list[SkillStep] = []
    for i, item in enumerate(raw, 1):
        problem = _step_problem(item)
        if problem:
            note(line, f"metadata.lar.steps[{i}]: {problem}; the skill's steps are ignored")
            return []
        steps.append(
            SkillStep(
                tool=str(item.get("tool") or ""),
                skill=str(item.get("skill") or ""),
                arguments=item.get("arguments", {}),
                output=str(item.get("output") or ""),
                line=line,
            )
        )
    return steps


def _step_problem(item: Any) -> str | None:
    from lar.skills.templates import template_problem

    if not isinstance(item, dict):
        return "a step is a mapping with 'tool' or 'skill', 'arguments' and 'output'"
    if bool(item.get("tool")) == bool(item.get("skill")):
        return "give exactly one of 'tool' and 'skill'"
    unknown = set(item) - {"tool", "skill", "arguments", "output"}
    if unknown:
        return f"unknown key(s) {', '.join(sorted(map(str, unknown)))}"
    output = item.get("output")
    if output is not None and not _OUTPUT_RE.match(str(output)):
        return f"output {output!r} must be a name (letters, digits, _)"
    arguments = item.get("arguments", {})
    if not isinstance(arguments, dict | str):
        return "arguments must be a mapping or one template string"
    return template_problem(arguments)


def iter_loaded(results: list[LoadResult]) -> Iterator[Skill]:
    return (r.skill for r in results if r.skill is not None)
