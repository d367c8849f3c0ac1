"""Jobs fire once per due time, follow their missed-run policy, deliver to the inbox, and a
scheduled run has only the permissions granted when its job was made."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from lar.agents import Agent, Runner, TaskStore
from lar.agents.scheduled import JobRunner
from lar.engines.scripted import ScriptedEngine
from lar.scheduler import JobStore, ScheduleError
from lar.tools import builtin_tools

TZ = "Europe/Lisbon"
NOW = datetime(2026, 12, 4, 15, 30, tzinfo=ZoneInfo(TZ)).timestamp()
NINE = datetime(2026, 12, 5, 9, 0, tzinfo=ZoneInfo(TZ)).timestamp()


class Clock:
    def __init__(self, at: float) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


def fire(runner: JobRunner) -> list[str]:
    return [f"{f.job.id}:{f.state}" for f in asyncio.run(runner.tick())]


def test_a_reminder_fires_at_its_time_once_and_reaches_the_inbox(lar_home: Path) -> None:
    store = JobStore(lar_home / "lar.db")
    job = store.add("call my mother", "tomorrow at 9am", tz=TZ, now=NOW)
    assert job.next_due == NINE
    clock = Clock(NINE - 60)
    runner = JobRunner(store, clock=clock)
    assert fire(runner) == [] and store.inbox() == []
    clock.at = NINE
    assert fire(runner) == [f"{job.id}:done"]
    assert fire(runner) == []  # once: never again
    [item] = store.inbox()
    assert item.title == "Reminder: call my mother" and item.body == "call my mother"
    assert store.get(job.id).status == "done"
    assert [(r.state, r.due) for r in store.runs(job.id)] == [("done", NINE)]


@pytest.mark.parametrize(("policy", "runs"), [("once", ["done"]), ("skip", ["skipped"])])
def test_downtime_over_many_due_times_ends_in_one_run_or_none(
    lar_home: Path, policy: str, runs: list[str]
) -> None:
    """The process stopped before 09:00 and starts three days later: one run (or a skip)."""
    store = JobStore(lar_home / "lar.db")
    job = store.add("water the plants", "daily 09:00", tz=TZ, now=NOW, missed=policy)  # type: ignore[arg-type]
    later = NINE + 3 * 86400 + 3600  # 10:00, three days on
    runner = JobRunner(store, clock=Clock(later))
    assert fire(runner) == [f"{job.id}:{runs[0]}"]
    assert fire(runner) == []
    assert [r.state for r in store.runs(job.id)] == runs
    assert store.get(job.id).next_due == NINE + 4 * 86400  # the next 09:00, not a backlog
    assert len(store.inbox()) == 1


def _tick_in_process(home: str, at: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = JobStore(Path(home) / "lar.db")
    out.put(fire(JobRunner(store, clock=Clock(at))))


def test_two_schedulers_on_one_database_never_run_a_job_twice(lar_home: Path) -> None:
    store = JobStore(lar_home / "lar.db")
    ids = [store.add(f"job {i}", "tomorrow at 9am", tz=TZ, now=NOW).id for i in range(20)]
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_tick_in_process, args=(str(lar_home), NINE + 1, out)) for _ in range(3)
    ]
    for p in procs:
        p.start()
    fired = [x for _ in procs for x in out.get(timeout=120)]
    for p in procs:
        p.join(60)
    assert sorted(fired) == sorted(f"{i}:done" for i in ids)  # each exactly once, all of them
    assert len(store.inbox(limit=100)) == 20


def test_a_bad_expression_is_refused_and_nothing_is_stored(lar_home: Path) -> None:
    store = JobStore(lar_home / "lar.db")
    with pytest.raises(ScheduleError, match="'61 9 \\* \\* \\*' is not a valid cron"):
        store.add("x", "61 9 * * *", tz=TZ, now=NOW)
    with pytest.raises(ScheduleError, match="unknown time zone 'Mars/Olympus'"):
        store.add("x", "daily 09:00", tz="Mars/Olympus", now=NOW)
    assert store.jobs(everything=True) == []


def test_pause_resume_and_remove(lar_home: Path) -> None:
    store = JobStore(lar_home / "lar.db")
    job = store.add("stretch", "every 2h", tz=TZ, now=NOW)
    store.pause(job.id)
    runner = JobRunner(store, clock=Clock(NOW + 5 * 3600))
    assert fire(runner) == []  # paused: not due
    resumed = store.resume(job.id, now=NOW + 5 * 3600)
    assert resumed.next_due == NOW + 6 * 3600  # a time missed while paused is not made up for
    store.remove(job.id)
    assert store.jobs() == []


def _agent_runner(lar_home: Path, steps: list[str]) -> tuple[Agent, Runner, ScriptedEngine]:
    engine = ScriptedEngine(steps)
    runner = Runner(engine=engine, tasks=TaskStore(lar_home / "lar.db"))
    return Agent(tools=builtin_tools()), runner, engine


def _call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_a_scheduled_run_is_denied_a_confirm_tool_it_was_not_granted_and_says_so(
    lar_home: Path, tmp_path: Path
) -> None:
    agent, runner, _ = _agent_runner(
        lar_home,
        [_call("file_write", path="report.txt", content="hello"), "I could not write it."],
    )
    store = JobStore(lar_home / "lar.db")
    job = store.add(
        "write report.txt", "tomorrow at 9am", action="run", tz=TZ, now=NOW, folder=tmp_path
    )
    jobs = JobRunner(store, agent=agent, runner=runner, clock=Clock(NINE))
    assert fire(jobs) == [f"{job.id}:denied"]
    assert not (tmp_path / "report.txt").exists()
    [item] = store.inbox()
    assert "Denied (not granted when the job was made): file_write" in item.body
    [run] = store.runs(job.id)
    assert run.state == "denied" and run.task_id  # a normal task, with its id
    assert runner.tasks is not None and runner.tasks.get(run.task_id) is not None


def test_a_granted_confirm_tool_runs_unasked_in_a_scheduled_run(
    lar_home: Path, tmp_path: Path
) -> None:
    agent, runner, _ = _agent_runner(
        lar_home, [_call("file_write", path="report.txt", content="hello"), "Written."]
    )
    store = JobStore(lar_home / "lar.db")
    job = store.add(
        "write report.txt",
        "tomorrow at 9am",
        action="run",
        tz=TZ,
        now=NOW,
        grants=["file_write"],
        folder=tmp_path,
    )
    jobs = JobRunner(store, agent=agent, runner=runner, clock=Clock(NINE))
    assert fire(jobs) == [f"{job.id}:done"]
    assert (tmp_path / "report.txt").read_text() == "hello"


def test_a_job_that_tries_to_create_a_job_is_refused(lar_home: Path, tmp_path: Path) -> None:
    """Even with `schedule` granted, a job's run cannot make jobs."""
    agent, runner, _ = _agent_runner(
        lar_home,
        [_call("schedule", when="every 1h", text="again"), "I could not schedule it."],
    )
    store = JobStore(lar_home / "lar.db")
    job = store.add(
        "schedule yourself",
        "tomorrow at 9am",
        action="run",
        tz=TZ,
        now=NOW,
        grants=["schedule"],
        folder=tmp_path,
    )
    jobs = JobRunner(store, agent=agent, runner=runner, clock=Clock(NINE))
    [fired] = asyncio.run(jobs.tick())
    assert [j.id for j in store.jobs(everything=True)] == [job.id]  # no new job
    # The refusal is said in what reaches the inbox, whatever the model wrote.
    assert f"a scheduled job (job {job.id}) cannot create jobs" in fired.text
    assert f"a scheduled job (job {job.id}) cannot create jobs" in store.inbox()[0].body


def test_the_schedule_tool_makes_a_job_and_says_when_in_full(lar_home: Path) -> None:
    (lar_home / "config.yaml").write_text("scheduler:\n  timezone: Asia/Tokyo\n")
    engine = ScriptedEngine(
        [_call("schedule", when="tomorrow at 9am", text="call my mother"), "Done."]
    )
    agent = Agent(engine=engine, tools=builtin_tools(), approver=lambda call, tool: True)
    result = agent.run("Remind me tomorrow at 9am to call my mother")
    [job] = JobStore(lar_home / "lar.db").jobs()
    assert (job.what, job.action, job.created_by) == ("call my mother", "remind", "agent")
    assert job.tz == "Asia/Tokyo"  # the configured zone, not this machine's
    [call] = result.tool_calls
    assert call.ok and f"scheduled job {job.id}, a reminder: 'call my mother' for" in call.result
    assert "inbox" in call.result


def test_the_agent_is_made_only_when_a_request_job_first_needs_it(
    lar_home: Path, tmp_path: Path
) -> None:
    made: list[int] = []

    def make() -> tuple[Agent, Runner]:
        engine = ScriptedEngine(["Nothing to do."], repeat_last=True)
        made.append(1)
        return Agent(tools=builtin_tools()), Runner(
            engine=engine, tasks=TaskStore(lar_home / "lar.db")
        )

    store = JobStore(lar_home / "lar.db")
    store.add("call my mother", "tomorrow at 9am", tz=TZ, now=NOW)
    jobs = JobRunner(store, clock=Clock(NINE), make_agent=make)
    assert fire(jobs) == ["1:done"] and made == []  # a reminder needs no model
    store.add("tidy up", "every 1h", action="run", tz=TZ, now=NINE, folder=tmp_path)
    jobs.clock = Clock(NINE + 3600)
    assert fire(jobs) == ["2:done"] and made == [1]
    jobs.clock = Clock(NINE + 7200)
    assert fire(jobs) == ["2:done"] and made == [1]  # made once, kept
