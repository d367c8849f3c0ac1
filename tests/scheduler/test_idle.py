"""Idle mode: off by default; on, it runs only the listed reviewed actions, once per idle
stretch, and a config naming anything else is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lar.agents import Agent, IdleMode, Runner, TaskStore
from lar.config import IdleSettings, load_config
from lar.engines.scripted import ScriptedEngine
from lar.errors import ConfigError
from lar.scheduler import JobStore
from lar.tools import builtin_tools


class Clock:
    def __init__(self, at: float) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


def _setup(lar_home: Path) -> tuple[JobStore, TaskStore, Runner, ScriptedEngine]:
    tasks = TaskStore(lar_home / "lar.db")
    tasks.create("t_person", "what is on my list?", "default")  # a person's task, just now
    engine = ScriptedEngine(["You have two notes: buy milk, call the bank."], repeat_last=True)
    runner = Runner(engine=engine, tasks=tasks, traces=False)
    return JobStore(lar_home / "lar.db"), tasks, runner, engine


def test_idle_mode_is_off_by_default(lar_home: Path) -> None:
    settings = load_config().scheduler.idle
    assert settings.enabled is False and settings.actions == []
    store, tasks, runner, engine = _setup(lar_home)
    last = store.last_activity()
    assert last is not None
    mode = IdleMode(
        settings,
        store,
        agent=Agent(tools=builtin_tools()),
        runner=runner,
        clock=Clock(last + 86400),
    )
    assert asyncio.run(mode.tick()) == []
    assert engine.calls == [] and store.inbox() == []


def test_turned_on_it_runs_only_the_listed_actions_once_per_idle_stretch(lar_home: Path) -> None:
    store, tasks, runner, engine = _setup(lar_home)
    last = store.last_activity()
    assert last is not None
    settings = IdleSettings(enabled=True, after_minutes=30, actions=["summarize_notes"])
    clock = Clock(last + 29 * 60)
    mode = IdleMode(settings, store, agent=Agent(tools=builtin_tools()), runner=runner, clock=clock)
    assert asyncio.run(mode.tick()) == []  # not idle long enough
    clock.at = last + 31 * 60
    assert asyncio.run(mode.tick()) == ["summarize_notes"]
    assert asyncio.run(mode.tick()) == []  # once for this stretch
    [(action, _, state, result, task_id)] = store.idle_runs()
    assert (action, state) == ("summarize_notes", "done")
    assert result == "You have two notes: buy milk, call the bank."
    assert task_id is not None and tasks.get(task_id).status == "succeeded"  # a normal task
    assert store.last_activity() == last  # its own task is not a person's activity
    [item] = store.inbox()
    assert item.title == "Idle (done): summarize_notes"
    # The model was offered only the tools the action names.
    listing = engine.calls[0][0].content
    assert "notes(" in listing and "shell(" not in listing and "file_write(" not in listing


def test_a_config_naming_an_action_not_on_the_reviewed_list_is_refused(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text(
        "scheduler:\n  idle:\n    enabled: true\n    actions: [consolidate_memory, rm_rf_home]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert "config.yaml:4" in str(caught.value) and "rm_rf_home" in str(caught.value)
