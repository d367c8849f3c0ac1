"""Draws of everyday tasks: a fresh set of requests from a seed, each with a truth computed
from what was generated, so a model can be measured on tasks it has never seen (and no one has
tuned on) while every expectation stays exact.

A family is a function ``(rng, lang) -> Task``: it draws the workspace (files, tables, trees),
phrases one question from its templates (data: language -> kind -> templates) and computes the
answer. ``draw`` runs the families in turn for each language; ``to_yaml`` writes a draw in the
format ``lar.evals.everyday.load_tasks`` reads, so one can be saved, read and run again::

    tasks = draw(7, per_language=16)
    Path("draw-7.yaml").write_text(to_yaml(tasks), encoding="utf-8")

Seeds are split: ``DEV_SEEDS`` are the ones to tune on; ``TEST_SEEDS`` are for reporting only
and are never drawn while tuning (``part_of`` says which a seed is). A draw depends on its seed
only: each language has its own ``random.Random``, seeded from the
seed and the language's name, so a draw of some languages holds the same tasks as a draw of
all of them.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import yaml

from lar.evals.everyday import Task

from .files import file_facts, folders
from .live import live_data
from .pages import web_page
from .reckoning import arithmetic, dates, units
from .records import edits, tables

__all__ = [
    "DEV_SEEDS",
    "FAMILIES",
    "Family",
    "LANGUAGES",
    "TEST_SEEDS",
    "draw",
    "in_turns",
    "part_of",
    "to_yaml",
]

LANGUAGES = ("en", "pt", "es", "de", "fr", "zh")
DEV_SEEDS = range(0, 10_000)
"""Seeds to tune on: look at these draws, their answers and their failures freely."""
TEST_SEEDS = range(10_000, 20_000)
"""Seeds to report on: never drawn while a change is being tuned."""


def part_of(seed: int) -> str:
    """``"dev"`` or ``"test"``; ``ValueError`` for a seed in neither range."""
    if seed in DEV_SEEDS:
        return "dev"
    if seed in TEST_SEEDS:
        return "test"
    raise ValueError(
        f"seed {seed} is in neither the dev seeds ({DEV_SEEDS.start}-{DEV_SEEDS.stop - 1}) "
        f"nor the test seeds ({TEST_SEEDS.start}-{TEST_SEEDS.stop - 1})"
    )


Family = Callable[[random.Random, str], Task]
FAMILIES: dict[str, Family] = {
    "file_facts": file_facts,
    "folders": folders,
    "tables": tables,
    "edits": edits,
    "arithmetic": arithmetic,
    "units": units,
    "dates": dates,
    "live_data": live_data,
    "web_page": web_page,
}


def draw(seed: int, *, per_language: int = 40, languages: Sequence[str] = LANGUAGES) -> list[Task]:
    """``per_language`` tasks in each language, the families taking turns (so 45 gives each of
    the nine families five tasks a language); ids read ``g{seed}-{lang}-{family}-{n}``."""
    tasks = []
    for rng, lang, family, n in in_turns(f"{seed}", FAMILIES, per_language, languages):
        task = FAMILIES[family](rng, lang)
        tasks.append(dataclasses.replace(task, id=f"g{seed}-{lang}-{family}-{n}"))
    return tasks


def in_turns(
    key: str, kinds: Iterable[str], per_language: int, languages: Sequence[str]
) -> Iterator[tuple[random.Random, str, str, int]]:
    """For each language, ``per_language`` turns of the ``kinds`` in order: ``(rng, language,
    kind, n)``, ``n`` counting that kind's turns from 1. Each language has its own
    ``random.Random`` seeded from ``key`` and its name, so a draw of some languages holds the
    same items as a draw of all of them. ``ValueError`` names an unknown language."""
    unknown = [lang for lang in languages if lang not in LANGUAGES]
    if unknown:
        raise ValueError(f"no phrasing for language {unknown[0]!r}; known: {', '.join(LANGUAGES)}")
    if per_language < 1:
        raise ValueError("per_language must be at least 1")
    names = list(kinds)
    for lang in languages:
        rng = random.Random(f"{key}:{lang}")
        made = dict.fromkeys(names, 0)
        for turn in range(per_language):
            kind = names[turn % len(names)]
            made[kind] += 1
            yield rng, lang, kind, made[kind]


class _Dumper(yaml.SafeDumper):
    """Writes each value where it stands (no anchors, so every task reads on its own) and a
    file's lines as lines (a literal block, where YAML can hold the text so)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    )


_Dumper.add_representer(str, _text)


def to_yaml(tasks: Sequence[Task]) -> str:
    """Tasks as a task file (the format ``load_tasks`` reads; defaults left out)."""
    rows = []
    for task in tasks:
        row: dict[str, Any] = {"id": task.id, "category": task.category}
        if task.language:
            row["language"] = task.language
        row["request"] = task.request
        for key in ("files", "pages", "memory"):
            if getattr(task, key):
                row[key] = getattr(task, key)
        if task.yes:
            row["allow"] = True
        row["expect"] = task.expect
        rows.append(row)
    text = yaml.dump(rows, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)
    return str(text)
