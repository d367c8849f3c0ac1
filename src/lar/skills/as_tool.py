"""Each skill is a tool ``skill_<name>`` (K3) and is opened on demand (B3).

A skill of instructions becomes a read-only tool whose listing line is the description's first
sentence; calling it returns the body (or, for a long one, its opening and its sections), and a
section or a file under ``references/`` or ``templates/`` when asked for by ``part``. Nothing of
the body is in the prompt until the model opens it.

A skill with steps (K2) becomes a tool whose parameters are its templates' placeholders. Its
steps run in order through the same executor as any call the model makes
(``ToolContext.call_tool``), so each nested tool keeps its own permission, danger check,
validation and timeout; a step's result is kept under its ``output`` name for the next steps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from lar.skills.manifest import Skill, SkillError, tool_name
from lar.skills.templates import placeholders, render_arguments
from lar.tools.base import SchemaTool, ToolContext

__all__ = ["find_cycle", "skill_tools"]

OPEN_CHARS = 2_800
"""How much of a body one call returns: under the executor's clip (3,200 characters) with room
for the header and the list of sections."""
STEPS_TIMEOUT_S = 600.0
_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")


class SkillTool(SchemaTool):
    """A ``SchemaTool`` that also gets the run's ``ToolContext`` (as ``_lar_ctx``, a name no
    placeholder of the skill's templates is likely to take)."""

    def __init__(self, skill: Skill, parameters: dict[str, Any], fn: Any, **kw: Any) -> None:
        super().__init__(skill.tool_name, skill.short(), parameters, fn, **kw)
        self.context_param = "_lar_ctx"
        self.skill = skill


def skill_tools(
    skills: Iterable[Skill], available: Iterable[str]
) -> tuple[list[SkillTool], list[str]]:
    """A tool per skill, and one line per skill left out and why (a step naming a tool or skill
    that is not here, a cycle). ``available`` names the agent's other tools."""
    skills = list(skills)
    names = {s.name for s in skills}
    have = set(available)
    tools: list[SkillTool] = []
    notes: list[str] = []
    cycle = find_cycle(skills)
    for skill in skills:
        if cycle and skill.name in cycle:
            notes.append(
                f"skill {skill.name!r} left out: its steps form a cycle {' → '.join(cycle)}"
            )
            continue
        missing = [
            s.target
            for s in skill.steps
            if (s.skill and s.skill not in names) or (s.tool and s.tool not in have)
        ]
        if missing:
            notes.append(
                f"skill {skill.name!r} left out: its steps need {', '.join(missing)}, "
                "which are not available here"
            )
            continue
        tools.append(_steps_tool(skill) if skill.steps else _open_tool(skill))
    return tools, notes


def find_cycle(skills: Iterable[Skill]) -> list[str] | None:
    """A cycle of skills calling skills (``["a", "b", "a"]``), or None."""
    calls = {s.name: [st.skill for st in s.steps if st.skill] for s in skills}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for nxt in calls.get(name, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt in calls and state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(calls):
        if state.get(name) is None:
            found = visit(name)
            if found:
                return found
    return None


# -- instructions ----------------------------------------------------------------------------


def _open_tool(skill: Skill) -> SkillTool:
    files = [
        f
        for kind in ("references", "templates", "scripts")
        for f in skill.resources().get(kind, [])
    ]
    sections = _sections(skill.body)
    parameters: dict[str, Any] = {"properties": {}, "additionalProperties": False}
    if files or len(skill.body) > OPEN_CHARS:
        parameters["properties"]["part"] = {
            "type": "string",
            "description": "A section of the skill or one of its files (listed when it opens)",
        }

    def open_skill(_lar_ctx: ToolContext, part: str | None = None) -> str:
        head = f"Skill {skill.name} (installed by the user). Follow it with the tools you have.\n"
        if part:
            return head + _part(skill, part, sections, files)
        text = skill.body
        if len(text) > OPEN_CHARS:
            text = text[:OPEN_CHARS].rsplit("\n", 1)[0] + "\n[…]"
            names = ", ".join(title for title, _ in sections[:30])
            text += f'\nSections (open one with part="…"): {names}'
        if files:
            text += f'\nFiles (open one with part="…"): {", ".join(files)}'
        examples = skill.frontmatter.get("x-lar-examples")
        if isinstance(examples, list) and examples:
            text += "\nRequests it served before: " + " | ".join(map(str, examples))
        return head + text

    tool = SkillTool(skill, parameters, open_skill)
    tool.read_only = tool.idempotent = True
    tool.reads_outside = True
    return tool


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading, its text) for each Markdown heading outside code fences; a section's text runs
    to the next heading of its level or higher, so it carries its subsections."""
    lines = body.splitlines()
    heads: list[tuple[int, int, str]] = []  # line index, level, title
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            heads.append((i, len(match.group(1)), match.group(2)))
    found = []
    for n, (start, level, title) in enumerate(heads):
        end = next((i for i, lv, _ in heads[n + 1 :] if lv <= level), len(lines))
        found.append((title, "\n".join(lines[start:end])))
    return found


def _clipped(section: str) -> str:
    """A section within OPEN_CHARS; a longer one is cut and names the subsections it holds."""
    if len(section) <= OPEN_CHARS:
        return section
    inner = ", ".join(title for title, _ in _sections(section)[1:30])
    text = section[:OPEN_CHARS].rsplit("\n", 1)[0] + "\n[…]"
    return text + (f'\nSections (open one with part="…"): {inner}' if inner else "")


def _part(skill: Skill, part: str, sections: list[tuple[str, str]], files: list[str]) -> str:
    wanted = part.strip().strip("/")
    if wanted in files:
        text = (skill.folder / wanted).read_text(encoding="utf-8", errors="replace")
        return f"{wanted}:\n{text}"
    low = wanted.lower().lstrip("#").strip()
    chosen = next((t for t in sections if t[0].lower() == low), None) or next(
        (t for t in sections if low in t[0].lower()), None
    )
    if chosen is not None:
        return _clipped(chosen[1])
    known = [t for t, _ in sections] + files
    raise SkillError(
        f"skill {skill.name} has no part {part!r}; it has: {', '.join(known) or 'none'}"
    )


# -- steps -----------------------------------------------------------------------------------


def _steps_tool(skill: Skill) -> SkillTool:
    produced: set[str] = set()
    inputs: list[str] = []
    for step in skill.steps:
        for name in sorted(placeholders(step.arguments) - produced):
            if name not in inputs:
                inputs.append(name)
        if step.output:
            produced.add(step.output)
    meta = skill.frontmatter.get("metadata", {}).get("lar", {})
    described = meta.get("parameters", {}) if isinstance(meta.get("parameters"), dict) else {}
    parameters = {
        "properties": {
            n: {
                "type": ["string", "number", "integer", "boolean"],
                "description": str(described.get(n, "")),
            }
            for n in inputs
        },
        "required": inputs,
        "additionalProperties": False,
    }

    async def run_steps(_lar_ctx: ToolContext, **arguments: Any) -> str:
        ctx = _lar_ctx
        if ctx.call_tool is None:
            raise SkillError(f"skill {skill.name} has steps and needs the executor to run them")
        values: dict[str, Any] = dict(arguments)
        last: Any = None
        for i, step in enumerate(skill.steps, 1):
            args = render_arguments(step.arguments, values)
            target = tool_name(step.skill) if step.skill else step.tool
            result = await ctx.call_tool(target, args)
            if not result.ok:
                detail = result.error.detail if result.error else result.content
                raise SkillError(f"step {i} ({step.target}) failed: {detail}")
            last = result.value if result.value is not None else result.content
            if step.output:
                values[step.output] = last
        return last if isinstance(last, str) else json.dumps(last, ensure_ascii=False, default=str)

    return SkillTool(skill, parameters, run_steps, timeout_s=STEPS_TIMEOUT_S)
