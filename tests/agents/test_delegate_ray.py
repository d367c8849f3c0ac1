"""A delegate's sub-agents as Ray tasks (``executor: ray``, a local Ray instance on loopback
started by the run): the same statuses, answer and child traces as the local executor."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lar import Agent
from lar.config import load_config
from lar.engines.scripted import ScriptedEngine
from lar.errors import EngineError
from lar.types import SubTaskFinished

if importlib.util.find_spec("ray") is None:  # pragma: no cover - the optional extra
    if os.environ.get("CI"):
        raise ImportError("CI must run the Ray tests: install.sh installs lar[ray]")
    pytest.skip("the Ray executor is the optional extra lar[ray]", allow_module_level=True)

from test_delegate import SlowEngine, plan  # noqa: E402


@pytest.fixture(autouse=True)
def by_value() -> None:
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules["test_delegate"])  # workers cannot import it


@pytest.fixture
def ray_stops() -> Iterator[None]:
    yield
    import ray

    from lar.agents import batch

    for cluster in batch._SHARED:
        cluster.__exit__()
    batch._SHARED.clear()
    assert not ray.is_initialized()


def team(config_text: str, tmp_path: Path) -> Agent:
    path = tmp_path / "config.yaml"
    path.write_text(config_text)
    manager = ScriptedEngine(
        [
            plan(
                ("t1", "orders", "Get the status of order OD1.", []),
                ("t2", "logistics", "Get the tracking of order OD1.", []),
                ("t3", "inventory", "Count SKU 10023 in stock.", []),
            ),
            "Order OD1 has shipped.",
        ]
    )
    members = {
        "orders": Agent(engine=ScriptedEngine(["OD1 shipped on 2 December."]), description="O."),
        "logistics": Agent(
            engine=ScriptedEngine([EngineError("carrier-api", "connection refused")]),
            description="L.",
        ),
        "inventory": Agent(
            engine=SlowEngine(["352 units"], delay=30.0), description="I.", time_budget_s=0.5
        ),
    }
    return Agent(
        engine=manager, kind="delegate", members=members, config=load_config(path),
        workspace=tmp_path,
    )  # fmt: skip


def test_sub_agents_on_ray_end_as_they_do_locally(tmp_path: Path, ray_stops: None) -> None:
    local = team("agent:\n  max_parallel: 3\n", tmp_path).run("Where is OD1? SKU 10023?")
    on_ray = team("executor: ray\nagent:\n  max_parallel: 3\n", tmp_path)
    remote = on_ray.run("Where is OD1? SKU 10023?")
    import ray

    assert ray.is_initialized()  # it ran there, on loopback only
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    assert remote.text == local.text

    def ends(result: object) -> dict[str, tuple[str, str]]:
        return {
            e.id: (e.status, e.text)
            for e in result.events  # type: ignore[attr-defined]
            if isinstance(e, SubTaskFinished)
        }

    assert ends(remote) == ends(local)
    assert ends(remote)["t3"][0] == "timeout" and ends(remote)["t2"][0] == "failed"
    # the workers recorded the child traces in the same home
    traces = on_ray.runner.traces
    assert traces is not None
    children = {t.id.rsplit(".", 1)[1]: t.outcome for t in traces.children(remote.run_id)}
    assert children["t1"] == "answer" and children["t3"] == "time_budget"
