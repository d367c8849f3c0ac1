"""Skills on the embedded model: 20 real corpus skills enabled, the system prompt within 1,500
tokens, and requests that each match one skill — the model opens that skill and follows it.

Every confirmation is denied, so nothing runs that would need a yes. The requests are this
test's own, not cases of evals/skills/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lar import Agent
from lar.evals.skillcalls import command_words, followed_after_opening
from lar.skills import SkillStore, installed_skill_tools, scan_folder
from lar.tools import builtin_tools
from lar.types import ToolCall, ToolCallStarted

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "skills"
pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the skills corpus is not beside the checkout ({CORPUS})"
)
LOADED = (
    [r.skill for r in scan_folder(CORPUS) if r.skill is not None][:20] if CORPUS.is_dir() else []
)
SKILLS = {s.name: s for s in LOADED}  # the 20 enabled


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, model_home: Path) -> Agent:
    home = tmp_path_factory.mktemp("skills-home")
    (home / "models").symlink_to(model_home / "models", target_is_directory=True)
    monkey = pytest.MonkeyPatch()
    monkey.setenv("LAR_HOME", str(home))
    store = SkillStore(home)
    for skill in LOADED:
        assert store.install(str(skill.folder), trust=True).refused == []
    tools = builtin_tools()
    skills, notes = installed_skill_tools(home, [t.name for t in tools])
    assert len(skills) == 20 and notes == []
    workspace = tmp_path_factory.mktemp("skills-ws")
    made = Agent(
        tools=[*tools, *skills],
        workspace=workspace,
        approver=lambda call, tool: False,
        max_turns=3,
        memory=False,
        traces=False,
    )
    yield made
    made.close()
    monkey.undo()


def test_twenty_skills_keep_the_system_prompt_within_1500_tokens(agent: Agent) -> None:
    view = agent.preview("Hello")
    assert view.exact  # counted by the model's own tokenizer
    system = view.tokens["system"] + view.tokens["tools"] + view.tokens["memory"]
    assert system <= 1500, view.tokens
    assert 0 < view.tokens["skills"] < view.tokens["tools"]
    listing = view.messages[0].content
    assert listing.count("\nskill_") == 20
    assert "Tool 1: Text Banners" not in listing  # bodies wait until a skill is opened


@pytest.mark.parametrize(
    ("request_text", "skill"),
    [
        ("Turn the words GOOD MORNING into a large ASCII art banner", "ascii-art"),
        (
            "Measure this codebase: lines of code for each programming language",
            "codebase-inspection",
        ),
        (
            "Close issue 7 in my GitHub repository with a comment saying it is fixed",
            "github-issues",
        ),
    ],
)
def test_the_model_opens_the_matching_skill_and_follows_it(
    agent: Agent, request_text: str, skill: str
) -> None:
    """The first skill the model opens is the one the request needs, and its next call of
    another tool runs a program or module the skill's own code blocks use
    (lar.evals.skillcalls, read from the skill). Every confirmation is denied: the attempted
    call is what is checked."""
    calls: list[ToolCall] = []
    for event in agent.stream(request_text):
        if isinstance(event, ToolCallStarted):
            calls.append(event.call)
    agent.session().reset()
    shown = [f"{c.name}({json.dumps(c.arguments)[:100]})" for c in calls]
    want = "skill_" + skill.replace("-", "_")
    opened = [c.name for c in calls if c.name.startswith("skill_")]
    assert opened and opened[0] == want, shown
    words = command_words(SKILLS[skill].body)
    assert words, f"{skill} names no program to follow"
    assert followed_after_opening(calls, want, words), (shown, sorted(words))
