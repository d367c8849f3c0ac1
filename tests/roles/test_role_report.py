"""The model only phrases the report: whatever it writes, every transition is the same, and a
report that contradicts the structured result is caught and replaced by the plain one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from roles_helpers import CONTRACT_ROLE, CONTRACTS

from lar.engines.scripted import ScriptedEngine
from lar.roles import RoleRunner, check_report, load_role

BRAVO = {"document": str(CONTRACTS / "services-bravo.txt")}
FAITHFUL = (
    "Risk level: high. The contract lacks 4 required clauses (confidentiality, limitation of "
    "liability, termination, term) and has 2 red flags: unlimited liability in clause 4 and "
    "automatic renewal in clause 3."
)


def run_with(home: Path, engine: ScriptedEngine | None):  # type: ignore[no-untyped-def]
    r = RoleRunner(load_role(CONTRACT_ROLE), home=home, db_path=home / "lar.db", engine=engine)
    return r.run("screen this contract", BRAVO)


@pytest.mark.parametrize(
    ("said", "caught"),
    [
        ("Purple elephants dance at noon.", "does not state risk.level"),
        ("Risk level: low. Nothing is missing; 0 red flags.", "states risk.level as 'low'"),
        (
            "Risk level: high. 7 clauses are missing and there are 2 red flags.",
            "states the number 7",
        ),
        (
            "The risk is high with 4 missing clauses but no red flags at all.",
            "does not state risk.red_flags",
        ),
        ("", "empty"),
    ],
)
def test_a_contradicting_or_nonsense_report_is_caught_and_transitions_do_not_change(
    lar_home: Path, said: str, caught: str
) -> None:
    baseline = run_with(lar_home, None)
    engine = ScriptedEngine([said])
    run = run_with(lar_home, engine)
    assert len(engine.calls) == 1  # asked once, for the report only
    assert run.path == baseline.path
    assert run.result == baseline.result and run.result_hash == baseline.result_hash
    assert run.report_source.startswith("plain (model report replaced:")
    assert caught in run.report_source
    assert run.report == baseline.report  # the plain rendering, every field as it is
    assert "risk.level: high" in run.report


def test_a_faithful_report_is_kept(lar_home: Path) -> None:
    engine = ScriptedEngine([FAITHFUL])
    run = run_with(lar_home, engine)
    assert run.report_source == "model"
    assert run.report == FAITHFUL
    prompt = engine.calls[0][-1].content
    assert '"risk.level": "high"' in prompt and '"risk.missing_required": 4' in prompt


def test_the_model_never_sees_a_choice_of_transition(lar_home: Path) -> None:
    engine = ScriptedEngine(["Go to REJECTED. Risk level: high, 4 missing, 2 red flags."])
    run = run_with(lar_home, engine)
    assert run.path[-1] == "GENERATING_REPORT"
    system = engine.calls[0][0].content
    assert "result of a finished check" in system and "never add a fact" in system
    assert "level = high; missing required = 4; red flags = 2" in system


def test_list_numbers_and_zero_counts_in_words_are_not_contradictions() -> None:
    fields = {
        "risk.level": "high",
        "risk.missing_required": 2,
        "risk.red_flags": 0,
        "risk.reasons": ["A: missing (high)", "B: missing (low)"],
    }
    enums = {"risk.level": ["low", "medium", "high"]}
    must = ["risk.level", "risk.missing_required", "risk.red_flags"]
    text = "High risk, 2 clauses missing, no red flags:\n1. A is missing\n2. B is missing"
    assert check_report(text, fields, must, enums) == []
    invented = 'High risk, 2 missing. Clause A says "no liability whatsoever".'
    assert check_report(invented, fields, must, enums) == [
        "quotes 'no liability whatsoever', which the result does not contain"
    ]


def test_check_report_rules() -> None:
    fields = {
        "risk.level": "medium",
        "risk.missing_required": 1,
        "risk.reasons": ["A: missing (high)"],
    }
    enums = {"risk.level": ["low", "medium", "high", "unknown"]}
    must = ["risk.level", "risk.missing_required"]
    assert check_report("Medium risk: 1 clause is missing.", fields, must, enums) == []
    # a value the result holds elsewhere (a finding's severity) is not a contradiction
    assert (
        check_report("Risk medium; 1 missing clause, of high severity.", fields, must, enums) == []
    )
    assert check_report("High risk: 1 clause is missing.", fields, must, enums) == [
        "states risk.level as 'high'; the result is 'medium'"
    ]
    assert "says 'low', which the result does not hold (risk.level)" in check_report(
        "Medium risk, 1 missing; low impact.", fields, must, enums
    )


def test_a_role_runs_from_inside_an_event_loop(lar_home: Path) -> None:
    async def inside() -> str:
        return run_with(lar_home, ScriptedEngine([FAITHFUL])).report_source

    assert asyncio.run(inside()) == "model"
