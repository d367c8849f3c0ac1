"""Pipelines: retries, the circuit breaker, fallbacks, timeouts, and capabilities whose probe
fails routed to their degraded fallback."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from lar.roles import Capability, Probe, RoleRunner, ToolImpl, load_role, validate
from lar.scheduler import JobStore

ROLE = """\
name: flaky
version: 1.0.0
role: Matches words, with a matcher that may fail.
capabilities:
  - name: matcher
    builtin: matcher
    degraded: {precise_match: simple_match}
  - name: basic
    builtin: basic
tools:
  precise_match:
    input: {text: string}
    output: {status: string, hits: integer}
  simple_match:
    input: {text: string}
    output: {status: string, hits: integer}
pipelines:
  match:
    steps:
      - name: matching
        tool: precise_match
        input: {text: $request.text}
        timeout_ms: 200
        max_retries: 4
        circuit_breaker: {failure_threshold: 5, reset_timeout_ms: 60000}
        fallback: FALLBACK
states:
  MATCHING:
    run: match
    next:
      - {to: FOUND, when: matching.hits > 0}
      - {to: NOTHING}
  FOUND: {final: true}
  NOTHING: {final: true}
start: MATCHING
report:
  fields: [matching.hits]
"""

SCHEMA_IN = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
SCHEMA_OUT = {
    "type": "object",
    "properties": {"status": {"type": "string"}, "hits": {"type": "integer"}},
    "required": ["status", "hits"],
}


class Matcher:
    def __init__(self) -> None:
        self.calls = 0
        self.fail = True
        self.hang = False
        self.probe_ok = True

    def precise(self, args: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.hang:
            threading.Event().wait(2)
        if self.fail:
            raise ConnectionError("matcher backend down")
        return {"status": "success", "hits": args["text"].count("x")}

    def probe(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": self.probe_ok}


def simple(args: dict[str, Any]) -> dict[str, Any]:
    return {"status": "success", "hits": args["text"].lower().count("x")}


FALLBACKS = {
    "tool": "{strategy: tool, tool: simple_match, notify: [inbox]}",
    "stop": "{strategy: stop, notify: [inbox]}",
}


def make(home: Path, matcher: Matcher, fallback: str = "tool"):  # type: ignore[no-untyped-def]
    file = home / "flaky.yaml"
    file.write_text(ROLE.replace("FALLBACK", FALLBACKS[fallback]))
    caps = {
        "matcher": Capability(
            "matcher",
            "1.0.0",
            {
                "precise_match": ToolImpl(
                    "precise_match", matcher.precise, SCHEMA_IN, SCHEMA_OUT, capability="matcher"
                ),
                "probe_tool": ToolImpl(
                    "probe_tool",
                    matcher.probe,
                    {"type": "object"},
                    {"type": "object"},
                    capability="matcher",
                ),
            },
            probe=Probe("probe_tool", {}, {"ok": True}),
        ),
        "basic": Capability(
            "basic",
            "1.0.0",
            {
                "simple_match": ToolImpl(
                    "simple_match", simple, SCHEMA_IN, SCHEMA_OUT, capability="basic"
                )
            },
        ),
    }
    notes: list[tuple[str, str, str]] = []
    runner = RoleRunner(
        load_role(file),
        home=home,
        db_path=home / "lar.db",
        capabilities=caps,
        notify=lambda c, t, b: (
            notes.append((c, t, b)),
            JobStore(home / "lar.db").deliver(None, t, b),
        ),
    )
    return runner, notes


def test_five_failures_open_the_breaker_and_the_fallback_runs(lar_home: Path) -> None:
    matcher = Matcher()
    runner, notes = make(lar_home, matcher)
    first = runner.run("xXx")
    assert matcher.calls == 5  # one try and four retries
    step = first.steps[0]
    assert step.status == "degraded" and step.tool == "simple_match" and step.attempts == 6
    assert "matcher backend down" in step.error
    assert first.outcome == "degraded" and first.path == ["MATCHING", "FOUND"]
    assert first.result["fields"]["matching.hits"] == 3
    assert "precise_match could not be used" in first.result["degraded"][0]
    assert "note: precise_match could not be used" in first.report
    assert notes and notes[0][0] == "inbox" and "step matching degraded" in notes[0][1]
    assert "step matching degraded" in JobStore(lar_home / "lar.db").inbox()[0].title
    assert runner.breakers.all()[0][:2] == ("matching", 5)
    # the breaker is open: the next run does not call the matcher at all
    matcher.fail = False
    second = runner.run("xx")
    assert matcher.calls == 5
    assert "circuit open after 5 failures" in second.steps[0].error
    assert second.steps[0].status == "degraded"
    # after the reset time one trial goes through; it succeeds and closes the breaker
    with sqlite3.connect(lar_home / "lar.db") as db:
        db.execute("UPDATE role_breakers SET opened_at = opened_at - 61")
    third = runner.run("xx")
    assert matcher.calls == 6 and third.steps[0].status == "ok" and third.outcome == "completed"
    assert runner.breakers.all() == []


def test_a_step_that_runs_past_its_timeout_fails_and_is_retried(lar_home: Path) -> None:
    matcher = Matcher()
    matcher.hang = True
    runner, _ = make(lar_home, matcher)
    run = runner.run("x")
    assert "precise_match timed out after 200 ms" in run.steps[0].error
    assert run.steps[0].status == "degraded"


def test_a_stop_fallback_ends_the_run_with_what_failed(lar_home: Path) -> None:
    matcher = Matcher()
    runner, notes = make(lar_home, matcher, fallback="stop")
    run = runner.run("xx")
    assert run.outcome == "stopped" and run.path == ["MATCHING"]
    assert run.steps[0].status == "failed" and run.steps[0].output is None
    assert "matching: precise_match raised ConnectionError" in run.result["failed"][0]
    assert "matching.hits" not in run.result["fields"]  # nothing made up in its place
    assert notes[0][1] == "flaky: step matching failed"


def test_a_capability_whose_probe_fails_is_unavailable_and_routed_to_its_degraded_tool(
    lar_home: Path,
) -> None:
    matcher = Matcher()
    matcher.fail = False
    matcher.probe_ok = False
    runner, _ = make(lar_home, matcher, fallback="stop")
    run = runner.run("xx")
    assert matcher.calls == 0
    assert run.outcome == "degraded" and run.steps[0].tool == "simple_match"
    assert (
        "capability matcher UNAVAILABLE (probe got ok=False (expected True))" in run.steps[0].error
    )
    status = {c.name: c for c in runner.status()}
    assert status["matcher"].state == "UNAVAILABLE"
    assert status["matcher"].degraded == {"precise_match": "simple_match"}
    assert status["basic"].state == "AVAILABLE"


def test_an_external_check_that_disagrees_fails_the_step(lar_home: Path) -> None:
    matcher = Matcher()
    matcher.fail = False
    file = lar_home / "checked.yaml"
    text = ROLE.replace("FALLBACK", FALLBACKS["stop"]).replace(
        "        timeout_ms: 200\n",
        "        timeout_ms: 200\n        check:\n          tool: simple_match\n"
        "          input: {text: $request.text}\n          rule: check.hits == matching.hits\n",
    )
    file.write_text(text)
    runner, _ = make(lar_home, matcher)
    runner = RoleRunner(
        load_role(file),
        home=lar_home,
        db_path=lar_home / "lar.db",
        capabilities={k: runner.capabilities[k] for k in ("matcher", "basic")},
    )
    agreed = runner.run("x x")
    assert agreed.outcome == "completed"
    assert "external check simple_match: check.hits == matching.hits" in agreed.steps[0].verified
    runner.capabilities["matcher"].tools["precise_match"].fn = lambda args: {
        "status": "success",
        "hits": 99,
    }
    disagreed = runner.run("x x")
    assert disagreed.outcome == "stopped"
    assert "external check simple_match failed: check.hits == matching.hits" in (
        disagreed.steps[0].error
    )
    # validation: a check rule that reads a field the check tool does not return
    file.write_text(text.replace("check.hits ==", "check.count =="))
    problems = [p.message for p in validate(load_role(file))]
    assert any(
        "check rule reads 'check.count', but tool 'simple_match' returns no field" in m
        for m in problems
    ), problems
