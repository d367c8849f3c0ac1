"""Skills as tools (K3) with executable steps (K2), and skills opened on demand (B3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lar import Agent, tool
from lar.engines.scripted import ScriptedEngine
from lar.skills import Skill, load_skill
from lar.skills.as_tool import find_cycle, skill_tools
from lar.skills.store import SkillStore
from lar.tools import ToolContext
from lar.tools.builtin.code import shell as code_shell
from lar.types import ToolCall, ToolCallFinished, ToolCallStarted


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


@tool(permission="confirm")
def save_line(text: str, ctx: ToolContext) -> str:
    """Append a line to log.txt in the workspace."""
    with (ctx.workspace / "log.txt").open("a") as f:
        f.write(text + "\n")
    return "saved"


TOOLS = [multiply, divide, save_line]


def skill_md(name: str, description: str, steps: list[dict[str, Any]]) -> str:
    meta = json.dumps({"lar": {"steps": steps, "parameters": {"nights": "How many nights"}}})
    return f"---\nname: {name}\ndescription: {description}\nmetadata: {meta}\n---\nSteps.\n"


def write_skill(root: Path, name: str, text: str) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(text)
    return root / name


SHARE = skill_md(
    "unit-share",
    "Split a total among people.",
    [{"tool": "divide", "arguments": {"a": "{{ total }}", "b": "{{ people }}"}, "output": "each"}],
)
TRIP = skill_md(
    "trip-split",
    "Work out a trip's cost and each person's share, and log it.",
    [
        {
            "tool": "multiply",
            "arguments": {"a": "{{ nights }}", "b": "{{ rate }}"},
            "output": "total",
        },
        {
            "skill": "unit-share",
            "arguments": {"total": "{{ total }}", "people": "{{ people }}"},
            "output": "share",
        },
        {
            "tool": "save_line",
            "arguments": {"text": "{{ nights }} nights: {{ total }} in all, {{ share }} each"},
        },
    ],
)


class Recorder:
    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.asked: list[ToolCall] = []

    def __call__(self, call: ToolCall, tool: Any) -> bool:
        self.asked.append(call)
        return self.allow


def trip_agent(tmp_path: Path, approver: Recorder) -> tuple[Agent, ScriptedEngine]:
    store = SkillStore(tmp_path / "home")
    src = tmp_path / "src"
    write_skill(src, "unit-share", SHARE)
    write_skill(src, "trip-split", TRIP)
    report = store.install(str(src), trust=True)
    assert report.refused == [] and len(report.installed) == 2
    skills, notes = store.enabled_skills()
    made, left_out = skill_tools(skills, [t.name for t in TOOLS])
    assert notes == [] and left_out == []
    engine = ScriptedEngine(
        [
            '<tool_call>{"name": "skill_trip_split", "arguments": '
            '{"nights": 3, "rate": 120, "people": 4}}</tool_call>',
            "Logged: 360 in all, 90 each.",
        ],
        repeat_last=True,  # a denied step: figures_without_data asks once, the answer stays
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agent = Agent(engine=engine, tools=[*TOOLS, *made], workspace=workspace, approver=approver)
    return agent, engine


def test_a_three_step_skill_with_a_nested_skill_chains_its_outputs(tmp_path: Path) -> None:
    approver = Recorder(allow=True)
    agent, _ = trip_agent(tmp_path, approver)
    trip = agent.executor.tools["skill_trip_split"]
    assert trip.parameters["required"] == ["nights", "rate", "people"]
    assert trip.parameters["properties"]["nights"]["description"] == "How many nights"
    result = agent.run("Log the cost split of my 3-night trip at 120 a night for 4 people")
    assert (agent.workspace / "log.txt").read_text() == "3 nights: 360.0 in all, 90.0 each\n"
    finished = [e.result for e in result.events if isinstance(e, ToolCallFinished)]
    assert [(r.name, r.ok, r.content) for r in finished] == [("skill_trip_split", True, "saved")]
    # the nested confirm tool asked the user itself, under an id of its own
    assert [(c.name, c.id.count("/")) for c in approver.asked] == [("save_line", 1)]


def test_a_denied_nested_step_fails_the_skill_and_writes_nothing(tmp_path: Path) -> None:
    agent, _ = trip_agent(tmp_path, Recorder(allow=False))
    result = agent.run("Log the cost split of my 3-night trip at 120 a night for 4 people")
    [finished] = [e.result for e in result.events if isinstance(e, ToolCallFinished)]
    assert not finished.ok
    assert "step 3 (save_line) failed" in finished.content
    assert not (agent.workspace / "log.txt").exists()


def test_a_cycle_is_refused_at_install_with_the_cycle_named(tmp_path: Path) -> None:
    store = SkillStore(tmp_path / "home")
    src = tmp_path / "src"
    call_b = [{"skill": "plan-b", "arguments": {"x": "{{ x }}"}}]
    call_a = [{"skill": "plan-a", "arguments": {"x": "{{ x }}"}}]
    write_skill(src, "plan-a", skill_md("plan-a", "A.", call_b))
    write_skill(src, "plan-b", skill_md("plan-b", "B.", call_a))
    report = store.install(str(src), trust=True)
    assert report.installed == []
    assert sorted(report.refused) == [
        ("plan-a", "its steps form a cycle: plan-a → plan-b → plan-a"),
        ("plan-b", "its steps form a cycle: plan-a → plan-b → plan-a"),
    ]
    alone = write_skill(
        tmp_path / "other", "loop", skill_md("loop", "L.", [{"skill": "loop", "arguments": {}}])
    )
    assert find_cycle([load_skill(alone)]) == ["loop", "loop"]


def test_a_step_naming_a_missing_tool_leaves_the_skill_out_saying_why(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "mailer",
        skill_md("mailer", "Mail.", [{"tool": "send_mail", "arguments": {"to": "{{ to }}"}}]),
    )
    made, notes = skill_tools([load_skill(folder)], [t.name for t in TOOLS])
    assert made == []
    assert notes == [
        "skill 'mailer' left out: its steps need send_mail, which are not available here"
    ]


LONG_BODY = "\n".join(
    ["# Setup", "Install nothing; the tools are here.", "", "## Daily use"]
    + [f"Line {i} of the daily routine." for i in range(200)]
    + ["", "## Troubleshooting", "If the export is empty, check the folder name."]
)


def test_an_instruction_skill_opens_on_demand_by_section_or_file(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "journal",
        f"---\nname: journal\ndescription: Keep a "
        f"daily journal. Use when asked to write the day down.\n---\n{LONG_BODY}\n",
    )
    (folder / "references").mkdir()
    (folder / "references" / "prompts.md").write_text("What made you smile today?\n")
    skill = load_skill(folder)
    [journal], _ = skill_tools([skill], [])
    assert journal.name == "skill_journal" and journal.description == "Keep a daily journal."
    assert journal.read_only and journal.permission == "auto"
    ctx = ToolContext(workspace=tmp_path)
    opened = journal.fn(ctx)
    assert opened.startswith("Skill journal (installed by the user).")
    assert "Line 5 of the daily routine." in opened and "Line 199" not in opened
    assert 'Sections (open one with part="…"): Setup, Daily use, Troubleshooting' in opened
    assert 'Files (open one with part="…"): references/prompts.md' in opened
    assert "check the folder name" in journal.fn(ctx, part="troubleshooting")
    # a section carries its subsections; a long one is cut and names them
    setup = journal.fn(ctx, part="Setup")
    assert "Install nothing" in setup and "Line 5 of the daily routine." in setup
    assert setup.endswith('Sections (open one with part="…"): Daily use, Troubleshooting')
    daily = journal.fn(ctx, part="daily use")
    assert daily.endswith("[…]") and "check the folder name" not in daily  # cut, no subsections
    assert "What made you smile" in journal.fn(ctx, part="references/prompts.md")
    with pytest.raises(Exception, match="has no part 'billing'; it has: Setup, Daily use"):
        journal.fn(ctx, part="billing")


def test_a_short_skill_without_files_takes_no_arguments(tmp_path: Path) -> None:
    skill = Skill("tea", "Brew tea well.", tmp_path, "Boil water. Steep 3 minutes.", {})
    [tea], _ = skill_tools([skill], [])
    assert tea.parameters["properties"] == {}
    assert tea.fn(ToolContext(workspace=tmp_path)).endswith("Boil water. Steep 3 minutes.")


def test_a_reopened_skill_becomes_the_command_its_guide_shows(tmp_path: Path) -> None:
    """The model opens a skill, then calls it again as if it could do the work: it is asked,
    in a short prompt of the guide and the request only, for the command, and that runs
    instead (through shell's own permission: here the user says no)."""
    body = "# Tea\n\nBoil with:\n\n```bash\nkettle --boil --cups 1\n```\n"
    skill = Skill("tea", "Brew tea well.", tmp_path, body, {})
    [tea], _ = skill_tools([skill], [])
    open_it = '<tool_call>{"name": "skill_tea", "arguments": {}}</tool_call>'
    again = '<tool_call>{"name": "skill_tea", "arguments": {"cups": 2}}</tool_call>'
    engine = ScriptedEngine(
        [open_it, again, "```bash\nkettle --boil --cups 2\n```", "I could not boil it: denied."]
    )
    asked: list[str] = []
    agent = Agent(
        engine=engine, tools=[code_shell, tea], workspace=tmp_path,
        approver=lambda call, tool: asked.append(call.arguments["command"]) is not None,
    )  # fmt: skip
    started = [
        e.call for e in agent.stream("Brew two cups of tea") if isinstance(e, ToolCallStarted)
    ]
    assert [c.name for c in started] == ["skill_tea", "shell"]
    assert started[1].arguments == {"command": "kettle --boil --cups 2"}
    assert asked == ["kettle --boil --cups 2"]  # the user was asked, and said no
    question = engine.calls[2]
    assert [m.role for m in question] == ["system", "user"]  # the guide and request only
    assert "kettle --boil --cups 1" in question[1].content
    assert "My request: Brew two cups of tea" in question[1].content
    assert "Boil with" not in question[0].content and "skill_tea" not in question[0].content
    # without the policy, the same model spends its turns on the skill
    plain = ScriptedEngine([open_it, again, "Done."])
    agent = Agent(engine=plain, tools=[code_shell, tea], workspace=tmp_path, policies=[])
    plain_calls = [e.call.name for e in agent.stream("Brew two cups of tea")
                   if isinstance(e, ToolCallStarted)]  # fmt: skip
    assert plain_calls == ["skill_tea", "skill_tea"]


def test_a_reopened_skill_without_a_command_is_nudged_to_act_on_it(tmp_path: Path) -> None:
    skill = Skill("tea", "Brew tea well.", tmp_path, "Steep green tea 3 minutes.", {})
    [tea], _ = skill_tools([skill], [])
    open_it = '<tool_call>{"name": "skill_tea", "arguments": {}}</tool_call>'
    engine = ScriptedEngine(
        [open_it, open_it, "Steep it.", '<tool_call>{"name": "multiply", "arguments": '
         '{"a": 2, "b": 3}}</tool_call>', "Done: 6."]
    )  # fmt: skip
    agent = Agent(engine=engine, tools=[multiply, tea, code_shell], workspace=tmp_path)
    result = agent.run("Brew me tea")
    assert [c.name for c in result.tool_calls] == ["skill_tea", "multiply"]
    nudged = engine.calls[3][-1].content
    assert "You opened skill_tea already" in nudged and "Do my request with it" in nudged


def test_command_words_are_read_from_the_skills_code_blocks() -> None:
    from lar.evals.skillcalls import command_words, follows

    body = (
        "Install:\n\n```bash\npip install pyfiglet\npython3 -m pyfiglet HI\nuvx pygount \\\n"
        "  --format=summary .\ngh issue list\n```\n\n```python\nimport cowsay\n```\n"
    )
    assert command_words(body) == {"pyfiglet", "pygount", "gh", "cowsay"}
    assert follows({"command": "gh issue close 7"}, {"gh"})
    assert not follows({"command": "ghost town"}, {"gh"})
    from lar.evals.skillcalls import followed_after_opening

    opened = ToolCall("1", "skill_gh", {})
    run = ToolCall("2", "shell", {"command": "gh issue list"})
    other = ToolCall("3", "shell", {"command": "ls"})
    assert followed_after_opening([opened, run], "skill_gh", {"gh"})
    assert not followed_after_opening([run, opened], "skill_gh", {"gh"})  # before, not after
    assert not followed_after_opening([opened, other, run], "skill_gh", {"gh"})  # next call only
    assert not followed_after_opening([run], "skill_gh", {"gh"})  # never opened
