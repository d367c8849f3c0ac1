"""A replacement that would delete words the user never named is asked about once, in any
language; a repeat runs, and a change the user asked for runs at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fakes import call

from lar import Agent
from lar.agents.edit_policies import deleted_words
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin.files import file_move, file_patch, file_write
from lar.types import Code, Notice


def run(tmp_path: Path, steps: list[str], request: str) -> tuple[object, ScriptedEngine]:
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[file_patch], workspace=tmp_path, approver=lambda *_: True)
    return agent.run(request), engine


def codes(result: object) -> list[str]:
    return [e.code for e in result.events if isinstance(e, Notice)]  # type: ignore[attr-defined]


def test_deleted_words_are_those_of_old_that_new_lacks() -> None:
    assert deleted_words("- fresh eggs", "- rye bread") == ["fresh", "eggs"]
    assert deleted_words("- fresh eggs", "- fresh eggs\n- rye bread") == []
    assert deleted_words("timeout=30", "timeout=300") == []  # "30" is inside "300"
    assert deleted_words("Olá Mundo", "olá mundo!") == []


def test_an_add_that_replaces_the_users_line_is_asked_about_and_the_line_kept(
    tmp_path: Path,
) -> None:
    (tmp_path / "shopping.md").write_text("- fresh eggs\n")
    steps = [
        call("file_patch", path="shopping.md", old="- fresh eggs", new="- rye bread"),
        call("file_patch", path="shopping.md", old="- fresh eggs", new="- fresh eggs\n- rye bread"),
        "Added.",
    ]
    result, engine = run(tmp_path, steps, 'Put "rye bread" on the list in shopping.md.')
    assert (tmp_path / "shopping.md").read_text() == "- fresh eggs\n- rye bread\n"
    assert Code.LOST_TEXT in codes(result)
    assert "'fresh', 'eggs'" in engine.calls[1][-1].content  # the question shows what would go


def test_a_repeated_deletion_runs_the_second_time(tmp_path: Path) -> None:
    (tmp_path / "shopping.md").write_text("- fresh eggs\n")
    patch = call("file_patch", path="shopping.md", old="- fresh eggs", new="- rye bread")
    result, _ = run(tmp_path, [patch, patch, "Done."], "Tidy up shopping.md")
    assert (tmp_path / "shopping.md").read_text() == "- rye bread\n"
    assert codes(result).count(Code.LOST_TEXT) == 1


@pytest.mark.parametrize(
    "request_text",
    [
        "In app.cfg set timeout=30 to timeout=90.",
        "No app.cfg, muda o timeout 30 para 45.",  # Portuguese: the user's words count alike
    ],
)
def test_a_change_the_user_named_runs_without_a_question(tmp_path: Path, request_text: str) -> None:
    (tmp_path / "app.cfg").write_text("[net]\ntimeout=30\n")
    new = "timeout=90" if "90" in request_text else "timeout=45"
    steps = [call("file_patch", path="app.cfg", old="timeout=30", new=new), "Changed."]
    engine = ScriptedEngine(steps, repeat_last=True)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[file_patch], workspace=tmp_path, approver=lambda *_: True)
    result = agent.run(request_text)
    assert (tmp_path / "app.cfg").read_text() == f"[net]\n{new}\n"
    assert Code.LOST_TEXT not in codes(result)
    assert not any("would delete" in m.content for sent in engine.calls for m in sent)


def test_with_no_turn_left_for_a_mended_call_the_call_runs_unasked(tmp_path: Path) -> None:
    (tmp_path / "shopping.md").write_text("- fresh eggs\n")
    patch = call("file_patch", path="shopping.md", old="- fresh eggs", new="- rye bread")
    engine = ScriptedEngine([patch, "Done."])
    agent = Agent(
        engine=engine, tools=[file_patch], workspace=tmp_path, approver=lambda *_: True,
        max_turns=2,
    )  # fmt: skip
    result = agent.run("Tidy up shopping.md")
    assert (tmp_path / "shopping.md").read_text() == "- rye bread\n"
    assert Code.LOST_TEXT not in codes(result)


# --- refused_call -------------------------------------------------------------------------

RENAMED = "The file notes.md has been renamed to plans.md."


def refused_run(tmp_path: Path, **kw: object) -> tuple[object, ScriptedEngine]:
    (tmp_path / "notes.md").write_text("- fresh eggs\n")
    steps = [call("file_write", path="plans.md", content="- fresh eggs\n", mode="create"), RENAMED]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[file_write], workspace=tmp_path,
                  approver=lambda *_: False, **kw)  # type: ignore[arg-type]  # fmt: skip
    return agent.run("Copy notes.md to plans.md"), engine


def test_a_call_the_user_did_not_allow_ends_the_run_with_lars_account(tmp_path: Path) -> None:
    result, engine = refused_run(tmp_path)
    assert len(engine.calls) == 1  # no reply of the model's after the refusal
    text = result.text  # type: ignore[attr-defined]
    assert "file_write was not run: it needs your permission" in text
    assert "renamed" not in text
    assert not (tmp_path / "plans.md").exists()
    assert Code.REFUSED_CALL in codes(result)


def test_without_refused_call_the_models_reply_after_the_refusal_is_the_answer(
    tmp_path: Path,
) -> None:
    result, engine = refused_run(tmp_path, policies=["-refused_call"])
    assert len(engine.calls) == 2
    assert result.text.startswith(RENAMED)  # type: ignore[attr-defined]
    assert Code.REFUSED_CALL not in codes(result)


def test_an_allowed_call_goes_on_to_the_models_answer(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("- fresh eggs\n")
    steps = [call("file_write", path="plans.md", content="- fresh eggs\n", mode="create"), "Done."]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[file_write], workspace=tmp_path, approver=lambda *_: True)
    result = agent.run("Copy notes.md to plans.md")
    assert result.text == "Done." and (tmp_path / "plans.md").read_text() == "- fresh eggs\n"
    assert Code.REFUSED_CALL not in codes(result)


def test_a_missing_credential_leaves_the_answer_to_the_model(tmp_path: Path) -> None:
    from lar.tools.base import tool

    @tool(permission="auth")
    def post_status(text: str) -> str:
        """Post a status."""
        return "posted"

    steps = [call("post_status", text="hi"), "I have no credential for posting."]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[post_status], workspace=tmp_path, approver=lambda *_: True)
    result = agent.run("Post hi")
    assert len(engine.calls) == 2  # not the user's no: the model answers without the tool
    assert result.text.startswith("I have no credential for posting.")
    assert Code.REFUSED_CALL not in codes(result)


@pytest.mark.parametrize("path", [None, "ideas.txt"])
def test_a_rename_written_as_a_replacement_of_names_runs_as_file_move(
    tmp_path: Path, path: str | None
) -> None:
    (tmp_path / "ideas.txt").write_text("call the plumber\n")
    args = {"old": "ideas.txt", "new": "plans.md"} | ({"path": path} if path else {})
    engine = ScriptedEngine([call("file_patch", **args), "Renamed."])  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[file_patch, file_move], workspace=tmp_path,
                  approver=lambda *_: True)  # fmt: skip
    result = agent.run("Renomeie ideas.txt para plans.md")
    assert "file_move" not in engine.calls[0][0].content  # not listed: held back
    assert (tmp_path / "plans.md").read_text() == "call the plumber\n"
    assert not (tmp_path / "ideas.txt").exists()
    assert [c.name for c in result.tool_calls] == ["file_move"]
    assert Code.PATCHED_RENAME in codes(result)


def test_a_replacement_that_could_mean_text_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "ideas.txt").write_text("see ideas.txt\n")  # the file holds its own name
    (tmp_path / "notes.txt").write_text("n\n")
    steps = [
        call("file_patch", path="ideas.txt", old="ideas.txt", new="plans.md"),
        call("file_patch", old="notes.txt", new="ideas.txt"),  # the new name is taken
        "Done.",
    ]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    agent = Agent(engine=engine, tools=[file_patch, file_move], workspace=tmp_path,
                  approver=lambda *_: True)  # fmt: skip
    result = agent.run("Change ideas.txt")
    assert (tmp_path / "ideas.txt").read_text() == "see plans.md\n"
    assert (tmp_path / "notes.txt").exists()
    assert Code.PATCHED_RENAME not in codes(result)
    # without a tool that moves, nothing is changed either
    (tmp_path / "a.txt").write_text("x\n")
    engine = ScriptedEngine([call("file_patch", old="a.txt", new="b.txt"), "Done."])  # type: ignore[arg-type]
    result = Agent(engine=engine, tools=[file_patch], workspace=tmp_path,
                   approver=lambda *_: True).run("Rename a.txt to b.txt")  # fmt: skip
    assert (tmp_path / "a.txt").exists() and Code.PATCHED_RENAME not in codes(result)
