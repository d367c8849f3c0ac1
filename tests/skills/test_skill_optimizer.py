"""Tuned skills (K6): ≥ 20 recorded traces → an overlay that wins on held-out requests; removing
the overlay gives back the skill as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from lar import Agent
from lar.cli.main import app
from lar.engines.scripted import ScriptedEngine
from lar.skills import SkillStore, read_overlay
from lar.skills.as_tool import skill_tools

SKILLS = {
    "trip-packing": "Helps with lists.",
    "meal-plan": "Plan the week's meals and the shopping list for them.",
    "budget": "Track monthly spending against a budget.",
}
PLACES = [
    "Oslo", "Lisbon", "Kyoto", "Nairobi", "Lima", "Reykjavik", "Hanoi", "Cusco", "Dublin",
    "Seville", "Tromso", "Marrakesh", "Quebec", "Bergen", "Zermatt", "Bali", "Porto", "Cairo",
    "Havana", "Tallinn", "Krakow", "Sydney", "Boston", "Athens",
]  # fmt: skip
TRIPS = [
    "What should I pack for a weekend trip to {}?",
    "Make me a packing checklist for my week in {}",
    "I'm flying to {} on Friday, what do I need to bring in my luggage?",
    "Help me pack a suitcase for a hiking trip near {}",
]
OTHERS = [
    ("meal-plan", "Plan dinners for this week with a shopping list"),
    ("meal-plan", "What should we cook Monday to Friday, and what do I buy?"),
    ("budget", "How much did I spend on groceries this month against my budget?"),
    ("budget", "Am I over my monthly spending limit?"),
]


def install(home: Path, tmp_path: Path) -> SkillStore:
    src = tmp_path / "src"
    for name, description in SKILLS.items():
        (src / name).mkdir(parents=True)
        (src / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nAsk, then answer.\n"
        )
    store = SkillStore(home)
    assert store.install(str(src), trust=True).refused == []
    return store


def record(requests: list[tuple[str, str]], store: SkillStore, tmp_path: Path) -> None:
    """Each request served by its skill, as a real run with a trace."""
    skills, _ = store.enabled_skills()
    tools, _ = skill_tools(skills, [])
    for name, request in requests:
        tool = "skill_" + name.replace("-", "_")
        engine = ScriptedEngine(
            [f"<tool_call>{json.dumps({'name': tool, 'arguments': {}})}</tool_call>", "Done."],
            repeat_last=True,
        )
        with Agent(engine=engine, tools=tools, workspace=tmp_path, memory=False) as agent:
            assert agent.run(request).stop_reason == "answer"


def described(store: SkillStore) -> str:
    skills, _ = store.enabled_skills()
    tools, _ = skill_tools(skills, [])
    return next(t.description for t in tools if t.name == "skill_trip_packing")


def test_the_optimizer_writes_an_overlay_that_wins_held_out_and_rolls_back(
    lar_home: Path, tmp_path: Path
) -> None:
    store = install(lar_home, tmp_path)
    trips = [("trip-packing", TRIPS[i % 4].format(p)) for i, p in enumerate(PLACES)]
    record([*trips, *OTHERS], store, tmp_path)

    runner = CliRunner()
    done = runner.invoke(app, ["skill", "optimize"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    row = next(line for line in done.output.splitlines() if "trip-packing" in line)
    before, after = (int(x) for x in re.findall(r"(\d+)%", row))
    assert after > before
    assert "written" in row and re.search(r"│ 24 +│ \d+/\d+ ", row)
    assert re.search(r"meal-plan +│ 2 .*2 traces, 20 needed", done.output)

    overlay = read_overlay(store.root, "trip-packing")
    assert overlay is not None and overlay.train + overlay.held_out == 24
    assert (round(overlay.before * 100), round(overlay.after * 100)) == (before, after)
    assert overlay.description.startswith("Helps with lists: ")
    # the words added are the served requests' own; which ones depends on the split by trace
    # id (random here): "pack" missed the top when 7 of the 12 requests holding it were held out
    added = set(overlay.description.removeprefix("Helps with lists: ").rstrip(".").split(", "))
    asked = {w.lower() for t in TRIPS for w in re.findall(r"[^\W\d_]{3,}", t)}
    assert added and added <= asked, added
    assert len(overlay.examples) == 3
    # the model and the relevance check now meet the tuned line; opening shows the examples
    assert described(store) == overlay.description
    skills, _ = store.enabled_skills()
    opened = next(t for t in skill_tools(skills, [])[0] if t.name == "skill_trip_packing")
    assert "Requests it served before: " + overlay.examples[0] in opened.fn(None)
    # the skill itself is untouched: its lock hash still matches
    assert store.check("trip-packing") == []
    assert SKILLS["trip-packing"] in (store.root / "trip-packing" / "SKILL.md").read_text()

    shown = runner.invoke(app, ["skill", "overlay", "show", "trip-packing"])
    assert "held-out top-1:" in shown.output and overlay.description in shown.output
    removed = runner.invoke(app, ["skill", "overlay", "remove", "trip-packing"])
    assert removed.exit_code == 0
    assert described(store) == SKILLS["trip-packing"]
    assert read_overlay(store.root, "trip-packing") is None
