"""Skills learned from verified work (K5): only the calls that succeeded, once; never twice."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.skills import SkillStore, load_skill
from lar.skills.as_tool import skill_tools

ATTEMPTS: dict[str, int] = {}


@tool(read_only=True)
def list_files(folder: str) -> list[str]:
    """List the files in a folder."""
    return [f"{folder}/march.csv"]


@tool(read_only=True)
def read_total(file: str) -> float:
    """Sum the amounts in a CSV file."""
    return 120.0


@tool(read_only=True)
def convert(amount: float, to: str) -> float:
    """Convert an amount in dollars to another currency."""
    ATTEMPTS[to] = ATTEMPTS.get(to, 0) + 1
    if ATTEMPTS[to] == 1:
        raise ValueError("rate service busy")
    return round(amount * 0.92, 2)


NOTES: list[str] = []


@tool
def save_note(text: str) -> str:
    """Save a note."""
    NOTES.append(text)
    return "saved"


@tool
def tag_note(tag: str) -> str:
    """Tag the last note."""
    return f"tagged {tag}"


TOOLS = [list_files, read_total, convert, save_note, tag_note]
REQUEST = "Put the total of my receipts folder in EUR into a note tagged finance"


def call(name: str, **args: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"


def run_task(tmp_path: Path) -> Agent:
    ATTEMPTS.clear()
    engine = ScriptedEngine(
        [
            call("list_files", folder="receipts"),
            call("read_total", file="receipts/march.csv"),
            call("convert", amount=120.0, to="EUR"),  # fails: the service is busy
            call("convert", amount=120.0, to="EUR"),  # the retry succeeds
            call("save_note", text="Receipts: 110.4 EUR"),
            call("tag_note", tag="finance"),
            "Saved a note: receipts total 110.4 EUR, tagged finance.",
        ]
    )
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    agent = Agent(engine=engine, tools=TOOLS, workspace=workspace, approver=lambda c, t: True)
    result = agent.run(REQUEST)
    assert result.stop_reason == "answer", result.text
    engine.assert_complete()
    failed = [c for c in result.tool_calls if not c.ok]
    assert [c.name for c in failed] == ["convert"] and len(result.tool_calls) == 6
    return agent


def test_a_task_with_a_failed_and_retried_call_drafts_only_the_path_that_worked(
    lar_home: Path, tmp_path: Path
) -> None:
    agent = run_task(tmp_path)
    learned = agent.session().learned
    assert learned is not None and learned.drafted and learned.steps == 5
    store = SkillStore(lar_home)
    entry = store.lock()[learned.name]
    assert (entry["draft"], entry["enabled"], entry["tier"]) == (True, False, "own")
    assert entry["source"].startswith("learned:t_")

    skill = load_skill(store.root / learned.name)
    steps = [(s.tool, s.arguments) for s in skill.steps]
    assert steps == [
        ("list_files", {"folder": "{{ folder }}"}),
        ("read_total", {"file": "receipts/march.csv"}),
        ("convert", {"amount": 120.0, "to": "{{ to }}"}),
        ("save_note", {"text": "Receipts: 110.4 EUR"}),
        ("tag_note", {"tag": "{{ tag }}"}),
    ]
    assert "rate service busy" not in (store.root / learned.name / "SKILL.md").read_text()
    front = yaml.safe_load((store.root / learned.name / "SKILL.md").read_text().split("---")[1])
    assert front["description"] == f"Repeat what worked for: {REQUEST}"
    # a draft is not offered until the user enables it; then it is a tool with parameters
    assert store.enabled_skills()[0] == []
    store.set_enabled(learned.name, True)
    assert "draft" not in store.lock()[learned.name]
    [made], _ = skill_tools(store.enabled_skills()[0], [t.name for t in TOOLS])
    assert made.parameters["required"] == ["folder", "to", "tag"]


def test_repeating_the_task_adds_no_second_skill(lar_home: Path, tmp_path: Path) -> None:
    first = run_task(tmp_path).session().learned
    again = run_task(tmp_path).session().learned
    assert again is not None and not again.drafted
    assert again.why == f"the same steps as {first.name!r}"
    assert list(SkillStore(lar_home).lock()) == [first.name]


def test_a_task_with_too_few_calls_or_learning_off_drafts_nothing(
    lar_home: Path, tmp_path: Path
) -> None:
    (lar_home / "config.yaml").write_text("skills:\n  learn: false\n")
    assert run_task(tmp_path).session().learned is None
    (lar_home / "config.yaml").write_text("skills:\n  learn_min_calls: 7\n")
    assert run_task(tmp_path).session().learned is None
    assert SkillStore(lar_home).lock() == {}


def test_l3_lists_installed_skills_and_drafts(lar_home: Path, tmp_path: Path) -> None:
    from lar.config import load_config
    from lar.memory.files import MemoryFiles
    from lar.memory.store import MemoryStore

    run_task(tmp_path)
    store = SkillStore(lar_home)
    [name] = list(store.lock())
    memory = MemoryStore(tmp_path / "m.db")
    files = MemoryFiles(memory, lar_home / "memory", store.l3_lines)
    files.export()
    l3 = (lar_home / "memory" / "L3_skills.md").read_text()
    assert f"- {name}: Repeat what worked for: Put the total" in l3
    assert f"(draft: review with `lar skill show {name}`)" in l3
    store.set_enabled(name, True)
    files.export()  # nothing audited in memory since, but the skills changed: rewritten
    assert (
        f"- {name}: Repeat what worked for: Put the total"
        in (lar_home / "memory" / "L3_skills.md").read_text()
    )
    assert "(enabled)" in (lar_home / "memory" / "L3_skills.md").read_text()
    assert load_config().skills.learn_min_calls == 5
