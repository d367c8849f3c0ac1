"""The delegate kind on scripted engines: a manager, named sub-agents, honest statuses, serial
and parallel sub-tasks, nested traces."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lar import Agent
from lar.agents.delegate import PlanError, parse_plan
from lar.engines.scripted import ScriptedEngine
from lar.errors import EngineError, LarError
from lar.types import Code, Message, ModelResponse, Notice, SubTaskFinished, ToolSpec


def plan(*tasks: tuple[str, str, str, list[str]]) -> str:
    return json.dumps(
        {"tasks": [{"id": i, "agent": a, "task": t, "after": after} for i, a, t, after in tasks]}
    )


class SlowEngine(ScriptedEngine):
    """Takes ``delay`` seconds per call (cancellable); counts calls running at once."""

    running = 0
    most = 0

    def __init__(self, steps: list[Any], delay: float) -> None:
        super().__init__(steps)
        self.delay = delay

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> ModelResponse:
        SlowEngine.running += 1
        SlowEngine.most = max(SlowEngine.most, SlowEngine.running)
        try:
            await asyncio.sleep(self.delay)
        finally:
            SlowEngine.running -= 1
        return await super().generate(messages, tools, **params)


@pytest.fixture(autouse=True)
def _count() -> None:
    SlowEngine.running = SlowEngine.most = 0


def member(engine: ScriptedEngine, about: str, **kw: Any) -> Agent:
    return Agent(engine=engine, description=about, workspace=Path("."), **kw)


def test_success_failure_and_timeout_each_reported_and_the_answer_names_what_is_missing() -> None:
    manager = ScriptedEngine(
        [
            plan(
                ("t1", "orders", "Get the status of order OD1.", []),
                ("t2", "logistics", "Get the tracking of order OD1.", []),
                ("t3", "inventory", "Count SKU 10023 in stock.", []),
            ),
            "Order OD1 has shipped.",  # says nothing of the parts that did not arrive
        ]
    )
    members = {
        "orders": member(ScriptedEngine(["OD1 shipped on 2 December."]), "Reads orders."),
        "logistics": member(
            ScriptedEngine([EngineError("carrier-api", "connection refused")]), "Tracks parcels."
        ),
        "inventory": member(
            SlowEngine(["352 units"], delay=30.0), "Counts stock.", time_budget_s=0.5
        ),
    }
    boss = Agent(engine=manager, kind="delegate", members=members, workspace=Path("."))
    result = boss.run("Where is order OD1, and do we have SKU 10023?")

    assert result.stop_reason == "answer"
    finished = {e.id: e for e in result.events if isinstance(e, SubTaskFinished)}
    assert {k: e.status for k, e in finished.items()} == {
        "t1": "success", "t2": "failed", "t3": "timeout",
    }  # fmt: skip
    assert "connection refused" in finished["t2"].reason
    assert "time budget" in finished["t3"].reason
    # the manager saw the failures first, and was told to say what is missing
    prompt = manager.calls[1][-1].content
    assert prompt.index("did NOT arrive") < prompt.index("Results that arrived")
    assert prompt.index("t2 (logistics, failed)") < prompt.index("OD1 shipped on 2 December")
    # its answer did not say so: the missing parts are added, never left out
    assert result.text.startswith("Order OD1 has shipped.")
    assert "Missing from this answer:" in result.text
    assert "t2 (logistics, failed)" in result.text and "t3 (inventory, timeout)" in result.text
    assert any(isinstance(e, Notice) and e.code == Code.MISSING_PARTS for e in result.events)

    # one parent trace, a child per sub-agent, with their statuses
    traces = boss.runner.traces
    assert traces is not None
    parent = traces.get(result.run_id)
    steps = {s.detail["id"]: s for s in parent.steps if s.kind == "subtask"}
    assert {k: s.detail["status"] for k, s in steps.items()} == {
        "t1": "success", "t2": "failed", "t3": "timeout",
    }  # fmt: skip
    children = {t.id: t for t in traces.children(result.run_id)}
    assert set(children) == {f"{result.run_id}.t1", f"{result.run_id}.t2", f"{result.run_id}.t3"}
    assert children[f"{result.run_id}.t1"].outcome == "answer"
    assert children[f"{result.run_id}.t3"].outcome == "time_budget"
    assert not children[f"{result.run_id}.t2"].success
    assert all(s.detail["run"] in children for s in steps.values())


def test_an_answer_that_names_the_missing_part_is_kept_as_written() -> None:
    manager = ScriptedEngine(
        [
            plan(("a", "orders", "Status of OD1.", []), ("b", "logistics", "Track OD1.", [])),
            "OD1 shipped; the logistics lookup failed, so I cannot say where it is.",
        ]
    )
    members = {
        "orders": member(ScriptedEngine(["shipped"]), "Reads orders."),
        "logistics": member(ScriptedEngine([EngineError("x", "down")]), "Tracks parcels."),
    }
    result = Agent(engine=manager, kind="delegate", members=members).run("Where is OD1?")
    assert result.text == "OD1 shipped; the logistics lookup failed, so I cannot say where it is."


def test_a_dependent_task_runs_after_and_sees_the_earlier_result() -> None:
    manager = ScriptedEngine(
        [
            plan(
                ("fetch", "orders", "List this month's returns.", []),
                ("rank", "analyst", "Rank the products by returns.", ["fetch"]),
            ),
            "Top returns: kettle.",
        ]
    )
    analyst_engine = ScriptedEngine(["kettle 12, toaster 3"])
    members = {
        "orders": member(SlowEngine(["kettle: 12 returns; toaster: 3 returns"], 0.2), "Orders."),
        "analyst": member(analyst_engine, "Sorts and counts."),
    }
    result = Agent(engine=manager, kind="delegate", members=members).run("Top returned products?")
    ends = {e.id: e for e in result.events if isinstance(e, SubTaskFinished)}
    assert ends["rank"].started >= ends["fetch"].ended
    task_sent = analyst_engine.calls[0][-1].content
    assert "Rank the products by returns." in task_sent
    assert "kettle: 12 returns; toaster: 3 returns" in task_sent


def test_independent_tasks_overlap_in_time_and_stay_within_max_parallel(tmp_path: Path) -> None:
    from lar.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  max_parallel: 2\n")
    tasks = [(f"t{n}", f"m{n}", f"Part {n}.", []) for n in range(4)]
    manager = ScriptedEngine([plan(*tasks), "all four parts done"])  # type: ignore[arg-type]
    members = {f"m{n}": member(SlowEngine([f"part {n}"], 0.3), f"Helper {n}.") for n in range(4)}
    boss = Agent(engine=manager, kind="delegate", members=members, config=load_config(path))
    result = boss.run("do the four parts")
    ends = [e for e in result.events if isinstance(e, SubTaskFinished)]
    assert [e.status for e in ends] == ["success"] * 4
    first, second = sorted(ends, key=lambda e: e.started)[:2]
    assert second.started < first.ended  # they ran at the same time
    assert SlowEngine.most == 2  # never more than max_parallel at once


def test_a_task_whose_needed_result_failed_is_not_run() -> None:
    manager = ScriptedEngine(
        [
            plan(
                ("fetch", "orders", "List the returns.", []),
                ("rank", "analyst", "Rank them.", ["fetch"]),
            ),
            "Nothing could be ranked: the returns could not be read (fetch failed).",
        ]
    )
    analyst_engine = ScriptedEngine(["never asked"])
    members = {
        "orders": member(ScriptedEngine([EngineError("db", "locked")]), "Orders."),
        "analyst": member(analyst_engine, "Sorts."),
    }
    result = Agent(engine=manager, kind="delegate", members=members).run("rank returns")
    ends = {e.id: e for e in result.events if isinstance(e, SubTaskFinished)}
    assert ends["rank"].status == "failed"
    assert ends["rank"].reason == "not run: needs fetch failed"
    assert analyst_engine.calls == []


def test_a_plan_naming_an_unknown_helper_is_sent_back_once_then_the_run_fails() -> None:
    bad = plan(("t1", "wizard", "Do magic.", []))
    manager = ScriptedEngine([bad, bad])
    members = {"orders": member(ScriptedEngine(["x"]), "Orders.")}
    boss = Agent(engine=manager, kind="delegate", members=members)
    with pytest.raises(LarError, match="no sub-agent 'wizard'; there are: orders"):
        boss.run("do it")
    assert "That plan cannot run: task t1: no sub-agent 'wizard'" in manager.calls[1][-1].content


def test_plans_are_checked() -> None:
    names = ["a", "b"]
    assert [t.id for t in parse_plan(plan(("x", "a", "go", [])), names)] == ["x"]
    assert parse_plan("```json\n" + plan(("x", "a", "go", [])) + "\n```", names)[0].agent == "a"
    with pytest.raises(PlanError, match="circle"):
        parse_plan(plan(("x", "a", "go", ["y"]), ("y", "b", "go", ["x"])), names)
    with pytest.raises(PlanError, match="waits for z"):
        parse_plan(plan(("x", "a", "go", ["z"])), names)
    with pytest.raises(PlanError, match="ids repeat"):
        parse_plan(plan(("x", "a", "go", []), ("x", "b", "go", [])), names)
    with pytest.raises(PlanError, match="not a plan"):
        parse_plan("I will do it myself.", names)


def test_sub_agents_from_the_config_get_their_own_tools_and_limits(tmp_path: Path) -> None:
    from lar import tool
    from lar.config import load_config

    @tool
    def read_orders(month: str) -> str:
        """Read the orders of a month."""
        return "kettle 12, toaster 3"

    @tool
    def send_mail(to: str, text: str) -> str:
        """Send an e-mail."""
        return "sent"

    path = tmp_path / "config.yaml"
    path.write_text(
        "agent:\n  kind: delegate\n  members: [reader]\n"
        "agents:\n"
        "  reader:\n    description: Reads orders.\n    allowlist: [read_orders]\n"
        "    max_turns: 3\n    token_budget: 5000\n"
        "  mailer:\n    description: Sends mail.\n    allowlist: [send_mail]\n"
    )
    engine = ScriptedEngine(
        [
            plan(("t1", "reader", "Read this month's orders.", [])),
            "kettle 12, toaster 3",  # the reader's answer (same engine here)
            "Most ordered: kettle.",
        ]
    )
    boss = Agent(
        tools=[read_orders, send_mail], engine=engine, config=load_config(path),
        workspace=tmp_path,
    )  # fmt: skip
    result = boss.run("What sold most?")
    assert result.text == "Most ordered: kettle."
    planning = engine.calls[0][0].content
    assert "- reader: Reads orders. (tools: read_orders)" in planning
    assert "mailer" not in planning  # not a member
    reader_prompt = engine.calls[1][0].content
    assert "read_orders(" in reader_prompt and "send_mail" not in reader_prompt


def test_the_config_refuses_a_member_it_does_not_define(tmp_path: Path) -> None:
    from lar.config import load_config
    from lar.errors import ConfigError

    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  kind: delegate\n  members: [ghost]\n")
    with pytest.raises(ConfigError, match="agent.members: no sub-agent 'ghost'"):
        load_config(path)


def test_the_delegate_runs_time_budget_cuts_its_sub_agents_and_says_what_arrived() -> None:
    manager = ScriptedEngine(
        [
            plan(("fast", "orders", "Status of OD1.", []), ("slow", "stock", "Count SKU 1.", [])),
            "never asked: the budget is spent before the answer",
        ]
    )
    members = {
        "orders": member(ScriptedEngine(["OD1 shipped."]), "Orders."),
        "stock": member(SlowEngine(["352"], delay=30.0), "Stock."),  # no budget of its own
    }
    boss = Agent(engine=manager, kind="delegate", members=members, time_budget_s=1.0)
    result = boss.run("OD1 and SKU 1?")
    assert result.stop_reason == "time_budget"
    assert len(manager.calls) == 1  # the plan only
    ends = {e.id: e for e in result.events if isinstance(e, SubTaskFinished)}
    assert ends["fast"].status == "success" and ends["slow"].status == "timeout"
    assert "time budget of 1 s spent" in result.text
    assert "OD1 shipped." in result.text  # what arrived is kept
    assert "Missing from this answer: slow (stock, timeout)" in result.text


def test_the_delegate_runs_token_budget_stops_the_manager() -> None:
    manager = ScriptedEngine([plan(("a", "orders", "Status of OD1.", [])), "unused"])
    members = {"orders": member(ScriptedEngine(["OD1 shipped."]), "Orders.")}
    boss = Agent(engine=manager, kind="delegate", members=members, token_budget=10)
    result = boss.run("OD1?")
    assert result.stop_reason == "token_budget"
    assert len(manager.calls) == 1
    assert "token budget of 10 spent" in result.text and "OD1 shipped." in result.text
