"""`lar eval`: the suite format, scoring, and an external suite run through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lar.evals.toolcalls import (
    Case,
    CaseResult,
    SuiteError,
    load_suite,
    score_case,
    summarize,
)
from lar.testing import MockOpenAIServer, text_reply, tool_call_reply

FIXTURE = Path(__file__).with_name("fixture_suite.jsonl")

WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["city"],
    },
}


def case(**expect: Any) -> Case:
    return Case("c", "single", "q", [WEATHER], expect)


def test_scoring_rules() -> None:
    want = case(calls=[{"name": "get_weather", "arguments": {"city": "Lisbon"}}])
    assert score_case(want, [("get_weather", {"city": " Lisbon "})], "")[0]
    assert score_case(want, [("get_weather", {"city": "LISBON."})], "")[0]  # case, final stop
    assert not score_case(want, [("get_weather", {"city": "Lisbonne"})], "")[0]
    # an optional argument at its default is fine; another value is not
    assert score_case(want, [("get_weather", {"city": "Lisbon", "unit": "celsius"})], "")[0]
    ok, why = score_case(want, [("get_weather", {"city": "Lisbon", "unit": "fahrenheit"})], "")
    assert not ok and "missing get_weather" in why
    ok, why = score_case(want, [("get_weather", {"city": "Lisbon"})] * 2, "")
    assert not ok and why.startswith("extra call")
    abstain = case(abstain=True, answer_contains=["gracias"])
    assert score_case(abstain, [], "¡Gracias!")[0]
    assert score_case(abstain, [("get_weather", {"city": "x"})], "Gracias")[1].startswith("called")
    assert not score_case(abstain, [], "Hello")[0]
    ordered = case(
        calls=[
            {"name": "get_weather", "arguments": {"city": "A"}},
            {"name": "get_weather", "arguments": {"city": "B"}},
        ],
        ordered=True,
    )
    assert score_case(
        ordered, [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})], ""
    )[0]
    assert not score_case(
        ordered, [("get_weather", {"city": "B"}), ("get_weather", {"city": "A"})], ""
    )[0]


HEAD = '{"id": "x", "category": "single", "question": "q", "tools": [], '


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":2: invalid JSON"),
        (HEAD.replace("single", "maybe") + '"expect": {"abstain": true}}',
         ":2: category 'maybe' is not one of"),
        (HEAD + '"expect": {"calls": [{"name": "ghost"}]}}',
         ":2: expect.calls[0] names a tool the case does not define ('ghost')"),
        (HEAD + '"expect": {"abstain": true}, "extra": 1}', ":2: unknown key 'extra'"),
        (HEAD.replace('"x"', '"w1"') + '"expect": {"abstain": true}}',
         ":2: id 'w1' already used at"),
    ],
)  # fmt: skip
def test_a_bad_suite_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    first = FIXTURE.read_text().splitlines()[1]  # a valid case with id w1
    path = tmp_path / "bad.jsonl"
    path.write_text(first + "\n" + line + "\n")
    with pytest.raises(SuiteError) as err:
        load_suite(path)
    assert str(err.value).startswith(f"{path}:2:") and message in str(err.value)


def _both_cities() -> dict[str, Any]:
    reply = tool_call_reply("get_weather", {"city": "Braga"})
    calls = reply["choices"][0]["message"]["tool_calls"]
    calls.append({**calls[0], "id": "call_2"})
    calls[1] = {**calls[1], "function": {"name": "get_weather", "arguments": '{"city": "Evora"}'}}
    return reply


def test_external_suite_through_the_cli(lar_home: Path, tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        msgs = body["messages"]
        if msgs[-1]["role"] == "tool":
            return text_reply("Done: " + msgs[-1]["content"])
        question = msgs[-1]["content"]
        if "Lisbon" in question:
            return tool_call_reply("get_weather", {"city": "Lisbon", "unit": "celsius"})
        if "Braga" in question:  # only one of the two cities: the parallel case must fail
            return tool_call_reply("get_weather", {"city": "Braga"})
        return text_reply("Gracias.")

    with MockOpenAIServer([reply], repeat_last=True) as srv:
        (lar_home / "config.yaml").write_text(
            f"model: mock\nmodels:\n  - {{name: mock, engine: openai, base_url: '{srv.url}'}}\n"
        )
        out_json = tmp_path / "results.jsonl"
        out = subprocess.run(
            [sys.executable, "-m", "lar", "eval", "--suite", str(FIXTURE), "--track", "native",
             "--failures", "--json", str(out_json)],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
            env={**os.environ, "LAR_HOME": str(lar_home), "COLUMNS": "200"},
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = {line.split("│")[1].strip(): line for line in out.stdout.splitlines() if "│" in line}
    assert "100.0%" in rows["single"] and "100.0%" in rows["abstain"] and "1/1" in rows["abstain"]
    assert "0.0%" in rows["parallel"] and "66.7%" in rows["all"]
    assert "p1 (parallel): missing get_weather{'city': 'Evora'}" in out.stdout
    results = [json.loads(x) for x in out_json.read_text().splitlines()]
    assert [(r["id"], r["ok"]) for r in results] == [("w1", True), ("a1", True), ("p1", False)]
    assert results[0]["calls"] == [["get_weather", {"city": "Lisbon", "unit": "celsius"}]]
    assert results[0]["tokens"] > 0


def _mock_reply(body: dict[str, Any]) -> dict[str, Any]:
    msgs = body["messages"]
    if msgs[-1]["role"] == "tool":
        return text_reply("Done: " + msgs[-1]["content"])
    if "Lisbon" in msgs[-1]["content"]:
        return tool_call_reply("get_weather", {"city": "Lisbon"})
    return text_reply("Gracias.")


def test_repairs_are_counted_against_the_cases_where_a_call_was_written() -> None:
    abstain = Case("a", "abstain", "q", [WEATHER], {"abstain": True})
    refused = CaseResult(abstain, True, "ok", [], "Paris.", 300, 1.0, True, wrote_calls=True)
    plain = CaseResult(abstain, True, "ok", [], "Hi.", 200, 1.0, False)
    (row, _all) = summarize([refused, plain])
    # the refused call was repaired before it was judged: 1 of the 1 case that wrote a call
    assert (row.category, row.repaired, row.with_calls) == ("abstain", 1, 1)
    back = CaseResult.from_row(abstain, refused.row("protocol"))
    assert back.wrote_calls and back.repaired and back.calls == []
    # rows written before the field: a call ran, or one was repaired or coerced
    old = refused.row("protocol")
    del old["wrote_calls"]
    assert CaseResult.from_row(abstain, old).wrote_calls
    assert not CaseResult.from_row(abstain, {**old, "repaired": False}).wrote_calls


def _eval(lar_home: Path, *args: str, suite: Path = FIXTURE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", "eval", "--suite", str(suite), "--track", "native", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "LAR_HOME": str(lar_home), "COLUMNS": "200"},
    )  # fmt: skip


def test_resume_runs_only_the_missing_cases(lar_home: Path, tmp_path: Path) -> None:
    out_json = tmp_path / "results.jsonl"
    with MockOpenAIServer([_mock_reply], repeat_last=True) as srv:
        (lar_home / "config.yaml").write_text(
            "model: mock\nmodels:\n"
            f"  - {{name: mock, engine: openai, base_url: '{srv.url}', n_ctx: 4096}}\n"
        )
        first = _eval(lar_home, "--json", str(out_json))
        assert first.returncode == 0, first.stderr
        rows = out_json.read_text().splitlines()
        assert len(rows) == 3 and len(srv.requests) > 0
        # A run that stopped after two cases: --resume runs the third one only.
        out_json.write_text("\n".join(rows[:2]) + "\n")
        before = len(srv.requests)
        again = _eval(lar_home, "--json", str(out_json), "--resume")
        assert again.returncode == 0, again.stderr
        asked = {m["content"] for r in srv.requests[before:] for m in r["messages"]
                 if m["role"] == "user"}  # fmt: skip
        assert asked == {"Weather in Braga and in Evora?"}
        # A case whose row is an error (the engine timed out) runs again; the new row counts.
        timed_out = {**json.loads(rows[1]), "ok": False, "error": "engine timed out"}
        out_json.write_text(f"{rows[0]}\n{json.dumps(timed_out)}\n")
        before = len(srv.requests)
        third = _eval(lar_home, "--json", str(out_json), "--resume")
        assert third.returncode == 0, third.stderr
        asked = {m["content"] for r in srv.requests[before:] for m in r["messages"]
                 if m["role"] == "user"}  # fmt: skip
        assert asked == {"Translate 'thank you' into Spanish.", "Weather in Braga and in Evora?"}
        rows_out = {ln.split("│")[1].strip(): ln for ln in third.stdout.splitlines() if "│" in ln}
        assert "66.7%" in rows_out["all"] and " 3 " in rows_out["all"]
        kept = [json.loads(x) for x in out_json.read_text().splitlines()]
        assert [(r["id"], r["error"]) for r in kept] == [
            ("w1", None),
            ("a1", "engine timed out"),
            ("a1", None),
            ("p1", None),
        ]  # nothing is lost: the error row stays in the file
    resumed = [r for r in kept if r["error"] is None]
    assert [r["id"] for r in resumed] == ["w1", "a1", "p1"]
    # The table counts all three, the kept ones included.
    rows_out = {ln.split("│")[1].strip(): ln for ln in again.stdout.splitlines() if "│" in ln}
    assert "66.7%" in rows_out["all"] and " 3 " in rows_out["all"]
    # The prompt footprint of the first call of each task, per part.
    assert "prompt footprint" in again.stdout
    assert all(r["parts"]["system"] > 0 and r["parts"]["tools"] > 0 for r in resumed)


def test_resume_refuses_a_broken_results_file_and_leaves_it(lar_home: Path, tmp_path: Path) -> None:
    out_json = tmp_path / "results.jsonl"
    out_json.write_text('{"track": "native", "id": "w1", "ok": true}\n{broken\n')
    before = out_json.read_text()
    out = _eval(lar_home, "--json", str(out_json), "--resume")
    assert out.returncode == 2 and f"{out_json}:1: not a lar eval result" in out.stderr
    assert out_json.read_text() == before
    no_file = _eval(lar_home, "--resume")
    assert no_file.returncode == 2 and "--resume needs --json FILE" in no_file.stderr


def test_a_bad_suite_exits_2_before_running(lar_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    out = subprocess.run(
        [sys.executable, "-m", "lar", "eval", "--suite", str(bad)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, "LAR_HOME": str(lar_home)},
    )  # fmt: skip
    assert out.returncode == 2 and f"{bad}:1: missing key 'category'" in out.stderr


def test_schema_tool_validates_with_json_schema() -> None:
    from lar.errors import ToolDefinitionError
    from lar.tools.base import SchemaTool, ToolArgumentError

    t = SchemaTool("get_weather", "Weather.", WEATHER["parameters"], lambda **kw: kw)
    assert t.validate({"city": "Evora"}) == {"city": "Evora"}
    assert t.signature() == 'get_weather(city: str, unit: "celsius"|"fahrenheit" = "celsius")'
    with pytest.raises(ToolArgumentError, match="missing required argument: 'city'"):
        t.validate({})
    with pytest.raises(ToolArgumentError, match="argument 'unit': 'kelvin' is not one of"):
        t.validate({"city": "Evora", "unit": "kelvin"})
    with pytest.raises(ToolDefinitionError, match="invalid parameters schema"):
        SchemaTool("bad", "", {"type": "object", "properties": {"x": {"type": "nope"}}}, print)


def test_the_shipped_suites_load_and_cover_every_category() -> None:
    from collections import Counter

    from lar.evals.toolcalls import CATEGORIES, default_suites, load_suites

    cases = load_suites([default_suites()])
    counts = Counter(c.category for c in cases)
    assert len(cases) >= 150 and set(counts) == set(CATEGORIES)
    assert all(3 <= len(c.tools) <= 6 for c in cases if c.category == "choose")
    assert all(len(c.expect["calls"]) >= 2 for c in cases if c.category == "parallel")
    assert all(c.expect.get("ordered") for c in cases if c.category == "two_step")


def _protocol_reply(body: dict[str, Any]) -> dict[str, Any]:
    """One city at first; both when asked for the calls the request still needs."""

    def block(city: str) -> str:
        return (
            f'<tool_call>{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}</tool_call>'
        )

    last = body["messages"][-1]["content"]
    if "<tool_result" in last:
        return text_reply("Mild in both.")
    if "Check my request again" in last:
        return text_reply(block("Braga") + "\n" + block("Evora"))
    if "Braga" in last:
        return text_reply(block("Braga"))
    if "Lisbon" in last:
        return text_reply(block("Lisbon"))
    return text_reply("Gracias.")


def test_ablate_measures_what_one_policy_adds(lar_home: Path, tmp_path: Path) -> None:
    with MockOpenAIServer([_protocol_reply], repeat_last=True) as srv:
        (lar_home / "config.yaml").write_text(
            f"model: mock\nmodels:\n  - {{name: mock, engine: openai, base_url: '{srv.url}'}}\n"
            "agent:\n  off_topic_below: null\n"  # no embedder: the test is about more_calls
        )
        out_json = tmp_path / "results.jsonl"
        out = _eval(lar_home, "--track", "protocol", "--ablate", "more_calls",
                    "--json", str(out_json))  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = {ln.split("│")[1].strip(): ln for ln in out.stdout.splitlines() if "│" in ln}
    assert "100.0%" in rows["all"]  # the full profile gets the parallel case
    without = rows["more_calls"]
    assert "66.7%" in without and "+33.3%" in without and "1/3" in without  # fired in 1 case
    results = [json.loads(x) for x in out_json.read_text().splitlines()]
    assert sorted({r["variant"] for r in results}) == ["", "-more_calls"]
    p1 = {r["variant"]: r for r in results if r["id"] == "p1"}
    assert p1[""]["ok"] and p1[""]["fired"] == {"more_calls": 1}
    assert p1[""]["asked"] == {"more_calls": 1}
    assert not p1["-more_calls"]["ok"] and p1["-more_calls"]["fired"] == {}
    # w1's comma gets the question asked (nothing added); a1 has nothing to ask about. Where
    # the policy neither spoke nor asked, the run without it is the same: not run again.
    w1 = {r["variant"]: r for r in results if r["id"] == "w1"}
    assert w1[""]["asked"] == {"more_calls": 1} and w1[""]["fired"] == {}
    reused = {r["id"] for r in results if r["variant"] == "-more_calls" and r["reused"]}
    assert reused == {"a1"}
    # w1 (call, ask, answer), a1, p1 (call, ask, answer); without: w1 and p1 (call, answer)
    assert len(srv.requests) == 3 + 1 + 3 + 2 + 2


def test_per_category_keeps_cases_spread_through_each(lar_home: Path, tmp_path: Path) -> None:
    lines = FIXTURE.read_text().splitlines()
    single = next(ln for ln in lines if '"category": "single"' in ln)
    extra = [single.replace('"id": "w1"', f'"id": "w{i}"') for i in (2, 3, 4, 5)]
    suite = tmp_path / "suite.jsonl"
    suite.write_text("\n".join([*lines, *extra]) + "\n")
    with MockOpenAIServer([_mock_reply], repeat_last=True) as srv:
        (lar_home / "config.yaml").write_text(
            f"model: mock\nmodels:\n  - {{name: mock, engine: openai, base_url: '{srv.url}'}}\n"
        )
        out_json = tmp_path / "results.jsonl"
        out = _eval(lar_home, "--per-category", "2", "--json", str(out_json), suite=suite)
    assert out.returncode == 0, out.stderr
    ids = [json.loads(x)["id"] for x in out_json.read_text().splitlines()]
    assert sorted(ids) == ["a1", "p1", "w1", "w3"]  # of five single cases, the 1st and 3rd


def test_spread_takes_each_case_once_and_keeps_file_order() -> None:
    from types import SimpleNamespace

    from lar.cli.evals import spread

    cases = [SimpleNamespace(category=cat, expect={}, id=f"{cat}{i}")
             for cat, n in (("a", 10), ("b", 2)) for i in range(n)]  # fmt: skip
    assert [c.id for c in spread(cases, 4)] == ["a0", "a2", "a5", "a7", "b0", "b1"]
    assert [c.id for c in spread(cases, 1)] == ["a0", "b0"]
    assert len(spread(cases, 50)) == 12


def test_ablate_rejects_an_unknown_policy(lar_home: Path) -> None:
    out = _eval(lar_home, "--ablate", "more_call")
    assert out.returncode == 2 and "--ablate: unknown policy 'more_call'; known: " in out.stderr


def test_the_help_lists_every_policy_of_the_default_profile() -> None:
    from lar.agents.policies import DEFAULT_PROFILE
    from lar.cli.evals import POLICY_NAMES

    assert tuple(POLICY_NAMES) == tuple(DEFAULT_PROFILE)
