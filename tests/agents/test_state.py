"""Task states and checkpoints in SQLite (A5), in-process; the crash test is in tests/cli."""

from __future__ import annotations

import json
from pathlib import Path

from lar import Agent
from lar.agents.state import TaskStore
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin import ask_user


def call(name: str, **args: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"


def test_states_through_a_task_with_a_question(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "lar.db")
    seen: list[str] = []

    def answer(question: str) -> str:
        seen.append(store.list()[0].status)  # what `lar tasks` shows while we wait
        return "the blue one"

    engine = ScriptedEngine([call("ask_user", question="Which file?"), "Opening the blue one."])
    agent = Agent(tools=[ask_user], engine=engine, tasks=store, ask_user=answer)
    result = agent.run("open my file")
    agent.close()
    (task,) = store.list()
    assert seen == ["waiting_user"]
    assert task.status == "succeeded" and task.result == "Opening the blue one."
    history, _ = store.load_checkpoint(task.id)
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[2].content == "the blue one"
    assert result.text == "Opening the blue one."
    assert oct((tmp_path / "lar.db").stat().st_mode)[-3:] == "600"


def test_failed_run_is_recorded(tmp_path: Path) -> None:
    from lar.errors import EngineError

    store = TaskStore(tmp_path / "lar.db")
    agent = Agent(engine=ScriptedEngine([EngineError("m", "down")]), tasks=store)
    try:
        agent.run("hi")
    except EngineError:
        pass
    agent.close()
    (task,) = store.list()
    assert task.status == "failed" and task.error == "m: down"
