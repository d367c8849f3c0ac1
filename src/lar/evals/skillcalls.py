"""Whether a model followed a skill it opened: read from the skill, never written per request.

``command_words`` are the programs and modules a skill's own code blocks use — the first word of
each shell line (shell built-ins and generic tools such as ``curl`` left out; for ``python -m X``
the module X, for ``uvx X`` the program X) and each Python import. A call made after the skill
opened follows it when its arguments name one of them. Used by ``bench/skills.py`` and the
skills end-to-end test.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lar.types import ToolCall

__all__ = ["command_words", "follows", "followed_after_opening"]

_GENERIC = frozenset(
    "echo cd export cat ls sudo if then fi for do done else while set source pip pip3 python "
    "python3 mkdir rm cp mv chmod curl wget grep sed awk head tail true false test printf "
    "import from print elif def return".split()
)
_SHELL = ("bash", "sh", "shell", "console", "zsh", "")


def command_words(body: str) -> set[str]:
    words: set[str] = set()
    for lang, block in re.findall(r"```(\w*)\n(.*?)```", body, re.S):
        continued = False
        for raw in block.splitlines():
            line = raw.strip().removeprefix("$ ")
            if continued:  # the rest of a command split over lines with a backslash
                continued = line.endswith("\\")
                continue
            continued = line.endswith("\\")
            if lang in ("python", "py"):
                m = re.match(r"(?:from|import)\s+([A-Za-z_]\w*)", line)
                if m:
                    words.add(m.group(1).lower())
            elif lang in _SHELL:
                module = re.match(r"python3?\s+-m\s+([A-Za-z_]\w*)", line)
                m = re.match(r"([a-z][a-z0-9_-]{1,})\b", line)
                runner = re.match(r"(?:uvx|npx|bunx|pipx\s+run)\s+([a-z][\w-]+)", line)
                if module:  # python3 -m pyfiglet: the module is what runs
                    words.add(module.group(1).lower())
                elif runner:  # uvx pygount: so is the program a runner fetches
                    words.add(runner.group(1))
                elif m and m.group(1) not in _GENERIC:
                    words.add(m.group(1))
    return words


def follows(arguments: dict[str, Any], words: set[str]) -> bool:
    text = json.dumps(arguments).lower()
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text) for w in words)


def followed_after_opening(calls: list[ToolCall], opened: str, words: set[str]) -> bool:
    """Whether the first call of another tool after ``opened`` (a skill's tool) was called
    follows it (``follows``)."""
    names = [c.name for c in calls]
    if opened not in names:
        return False
    after = [c for c in calls[names.index(opened) + 1 :] if not c.name.startswith("skill_")]
    return bool(after) and follows(after[0].arguments, words)
