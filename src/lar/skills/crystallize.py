"""Skills learned from verified work (K5).

After a task that succeeded with at least ``min_calls`` tool calls, its trace is turned into a
draft skill: the calls that succeeded, in order — never one that failed, was denied, refused or
timed out, and a call repeated with the same arguments once. Values the request spelled out
(a file name, a city, a number) become the skill's parameters, so the draft is a tool that
repeats the work for other values. A draft whose steps match an installed skill's is not made
again. Drafts are installed disabled, for review (``lar skill list --drafts``, ``lar skill show``,
``lar skill enable``), unless the user configured them to be enabled at once.
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from lar.skills.manifest import Skill
from lar.skills.store import SkillStore

if TYPE_CHECKING:
    from lar.traces import Trace

__all__ = ["Learned", "learn_from_trace", "verified_path"]

SKIPPED_TOOLS = frozenset({"ask_user", "update_working_checkpoint", "reply"})
"""Conversation and bookkeeping, not part of the work a skill repeats."""
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the and for with from into that this then them their what which please can you could "
    "would will about my our your its".split()
)


@dataclass(slots=True)
class Learned:
    """What learning from one trace did: ``drafted`` a new skill, or found it ``known``."""

    name: str
    drafted: bool
    steps: int
    why: str = ""


def verified_path(trace: Trace) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, result) of each call that succeeded, in order, once each."""
    path: list[tuple[str, dict[str, Any], str]] = []
    seen: set[str] = set()
    for step in trace.steps:
        if step.kind != "tool" or step.ok is not True or step.name in SKIPPED_TOOLS:
            continue
        args = step.detail.get("arguments")
        if not isinstance(args, dict):
            continue
        key = f"{step.name}:{sorted(args.items(), key=lambda kv: kv[0])!r}"
        if key in seen:
            continue
        seen.add(key)
        path.append((step.name, args, str(step.detail.get("result") or "")))
    return path


def learn_from_trace(
    store: SkillStore, trace: Trace, *, min_calls: int = 5, enable: bool = False
) -> Learned | None:
    """Draft a skill from ``trace`` when it earned one; None when it did not (and why not is
    not worth saying: a failed task, too few calls)."""
    calls = [s for s in trace.steps if s.kind == "tool"]
    if not trace.success or len(calls) < min_calls:
        return None
    path = verified_path(trace)
    if len(path) < 2:
        return None
    steps = _steps(path, trace.query)
    signature = _signature(steps)
    for skill in store.loaded_skills(store.lock()):
        if skill.steps and _signature_of(skill) == signature:
            return Learned(skill.name, False, len(steps), f"the same steps as {skill.name!r}")
    name = _unique(_slug(trace.query), store)
    with tempfile.TemporaryDirectory(prefix="lar-learned-") as tmp:
        folder = Path(tmp) / name
        folder.mkdir()
        (folder / "SKILL.md").write_text(_skill_md(name, trace, steps, path), encoding="utf-8")
        store.add_local(folder, source=f"learned:{trace.id}", draft=not enable)
    return Learned(name, True, len(steps))


def _steps(path: list[tuple[str, dict[str, Any], str]], query: str) -> list[dict[str, Any]]:
    """Each call as a step; argument values the request spelled out become placeholders."""
    low = query.lower()
    named: dict[str, str] = {}  # value → placeholder
    steps = []
    for tool, args, _ in path:
        arguments: dict[str, Any] = {}
        for key, value in args.items():
            text = (
                str(value)
                if isinstance(value, str | int | float) and not isinstance(value, bool)
                else ""
            )
            if text and len(text) >= 2 and _spelled_out(text.lower(), low):
                if text not in named:
                    base = re.sub(r"\W+", "_", key).strip("_") or "value"
                    name, n = base, 2
                    while name in named.values():
                        name, n = f"{base}_{n}", n + 1
                    named[text] = name
                arguments[key] = "{{ " + named[text] + " }}"
            else:
                arguments[key] = value
        steps.append({"tool": tool, "arguments": arguments})
    return steps


def _spelled_out(value: str, query: str) -> bool:
    if re.fullmatch(r"-?\d+(\.\d+)?", value):
        return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", query) is not None
    return value in query


def _signature(steps: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (s.get("tool") or "skill:" + str(s.get("skill")), tuple(sorted(s["arguments"])))
        for s in steps
    ]


def _signature_of(skill: Skill) -> list[tuple[str, tuple[str, ...]]]:
    return _signature(
        [
            {
                "tool": s.tool,
                "skill": s.skill,
                "arguments": s.arguments if isinstance(s.arguments, dict) else {},
            }
            for s in skill.steps
        ]
    )


def _slug(query: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", query).encode("ascii", "ignore").decode().lower()
    words = [
        w for w in _WORD.findall(ascii_text) if len(w) > 2 and w not in _STOP and not w.isdigit()
    ]
    return "-".join(words[:4])[:48].strip("-") or "learned"


def _unique(base: str, store: SkillStore) -> str:
    taken = set(store.lock())
    name, n = base, 2
    while name in taken or (store.root / name).exists():
        name, n = f"{base}-{n}", n + 1
    return name


def _skill_md(
    name: str,
    trace: Trace,
    steps: list[dict[str, Any]],
    path: list[tuple[str, dict[str, Any], str]],
) -> str:
    query = " ".join(trace.query.split())
    first = re.split(r"(?<=[.!?])\s", query, maxsplit=1)[0][:200]
    front = {
        "name": name,
        "description": f"Repeat what worked for: {first}",
        "metadata": {"lar": {"learned_from": trace.id, "steps": steps}},
    }
    when = datetime.fromtimestamp(trace.created, UTC).strftime("%Y-%m-%d")
    lines = [
        f"# {first}",
        "",
        f"Learned on {when} from task {trace.id}, which succeeded. Only the calls that",
        "succeeded are here, in the order they ran. Review before enabling:",
        "`lar skill show " + name + "`, then `lar skill enable " + name + "`.",
        "",
    ]
    for i, (tool, args, result) in enumerate(path, 1):
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        outcome = " ".join(result.split())[:120]
        lines.append(f"{i}. `{tool}({shown})` → {outcome}")
    body = "\n".join(lines) + "\n"
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + body
