"""The peers' bench (bench/peers_everyday.py): the plain tools every peer gets keep Lar's rule
(changes need the task's yes, nothing leaves the work folder or this computer), and the
side-by-side table counts what the rows say."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


agent = _load(BENCH / "peers" / "agent.py")
bench = _load(BENCH / "peers_everyday.py")


def _tools(tmp_path: Path, yes: bool) -> tuple[dict[str, Any], list[tuple[str, str]], Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "notes.txt").write_text("milk\neggs\n")
    log: list[tuple[str, str]] = []
    tools = {fn.__name__: fn for fn in agent.plain_tools(ws, home, yes, log)}
    return tools, log, ws


def test_without_a_yes_no_change_is_made_and_the_result_names_the_way_to_allow_it(
    tmp_path: Path,
) -> None:
    tools, log, ws = _tools(tmp_path, yes=False)
    results = [
        tools["write_file"]("new.txt", "x"),
        tools["write_file"]("notes.txt", "bread\n", append=True),
        tools["rename_file"]("notes.txt", "list.txt"),
        tools["delete_file"]("notes.txt"),
    ]
    assert all(r.startswith("refused") and "--yes" in r for r in results)
    assert sorted(p.name for p in ws.iterdir()) == ["notes.txt"]
    assert (ws / "notes.txt").read_text() == "milk\neggs\n"
    assert [name for name, _ in log] == ["write_file", "write_file", "rename_file", "delete_file"]


def test_with_a_yes_the_changes_are_made(tmp_path: Path) -> None:
    tools, _, ws = _tools(tmp_path, yes=True)
    tools["write_file"]("notes.txt", "bread\n", append=True)
    tools["rename_file"]("notes.txt", "sub/list.txt")
    tools["write_file"]("gone.txt", "x")
    tools["delete_file"]("gone.txt")
    assert (ws / "sub" / "list.txt").read_text() == "milk\neggs\nbread\n"
    assert not (ws / "notes.txt").exists() and not (ws / "gone.txt").exists()
    assert "sub/list.txt" in tools["list_folder"](".", recursive=True)


def test_nothing_outside_the_work_folder_or_this_computer_is_reached(tmp_path: Path) -> None:
    tools, log, _ = _tools(tmp_path, yes=True)
    (tmp_path / "secret.txt").write_text("s3cret")
    assert tools["read_file"]("../secret.txt").startswith("error: ")
    assert tools["delete_file"]("../secret.txt").startswith("error: ")
    assert tools["fetch_url"]("http://example.com/").startswith("error: ")
    assert (tmp_path / "secret.txt").exists()
    assert all("s3cret" not in result for _, result in log)


def test_the_memory_and_to_do_stores_keep_what_they_were_given(tmp_path: Path) -> None:
    tools, _, _ = _tools(tmp_path, yes=False)  # the stores are not files of the work folder
    tools["remember"]("I prefer green tea")
    tools["add_todo"]("call the plumber")
    assert "green tea" in tools["recall"]("which tea do I prefer")
    assert "call the plumber" in tools["list_todos"]()
    assert tools["add_reminder"]("dentist", "tomorrow").startswith("error: ")


def test_the_table_counts_each_agent_per_language_and_family() -> None:
    def row(agent_name: str, lang: str, family: str, passed: bool) -> dict[str, Any]:
        return {"agent": agent_name, "language": lang, "category": family, "passed": passed,
                "ungrounded": [], "pasted": not passed, "english": False,
                "model_calls": 2, "wall_s": 10.0}  # fmt: skip

    rows = [
        row("lar", "en", "tables", True),
        row("lar", "de", "tables", False),
        row("pydantic-ai", "en", "tables", False),
        row("pydantic-ai", "de", "edits", True),
    ]
    text = bench.side_by_side(rows, ["lar", "pydantic-ai"], "t")
    assert "| lar | 2 | 1 (50%) | 0 | 1 | 0 | 2 | 10.0 |" in text
    assert "| de | 0/1 | 1/1 |" in text
    assert "| edits | – | 1/1 |" in text


@pytest.mark.parametrize("name", ["nobody", "LAR"])
def test_an_unknown_agent_is_named_with_the_known_ones(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["peers_everyday.py", "--draw", "1", "--agents", name])
    with pytest.raises(SystemExit):
        bench.main()
    assert f"no agent {name!r}" in capsys.readouterr().err


def test_the_fired_ablation_table_counts_wins_and_losses_per_policy() -> None:
    everyday = _load(BENCH / "everyday.py")

    def row(task: str, passed: bool) -> dict[str, object]:
        return {"id": task, "passed": passed}

    runs = {
        "to_converter": [(row("a", True), row("a", False)), (row("b", True), row("b", True))],
        "pasted_result": [(row("c", False), row("c", True))],
    }
    lines = everyday.fired_table("t", runs).splitlines()
    assert "| `to_converter` | 2 | 2 | 1 | 1 | 0 |" in lines
    assert "| `pasted_result` | 1 | 0 | 1 | 0 | 1 |" in lines
    assert lines.index("| `to_converter` | 2 | 2 | 1 | 1 | 0 |") < lines.index(
        "| `pasted_result` | 1 | 0 | 1 | 0 | 1 |"
    )  # the policy that spoke most first


def test_the_report_pools_the_ablation_rows_of_several_files(tmp_path: Path) -> None:
    everyday = _load(BENCH / "everyday.py")

    def row(task: str, passed: bool, policies: list[str], arm: str | None = None) -> str:
        fields: dict[str, object] = {"id": task, "passed": passed, "policies": policies}
        if arm is not None:
            fields["arm"] = arm
        return json.dumps(fields)

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(
        "\n".join([
            row("g1-en-x-0", True, ["pasted_result"]),
            row("g1-en-x-0", False, [], "without pasted_result"),
            row("g1-en-y-0", True, []),
        ]) + "\n"
    )  # fmt: skip
    second.write_text(
        "\n".join([
            row("g2-de-x-0", False, ["pasted_result", "to_converter"]),
            row("g2-de-x-0", False, [], "without pasted_result"),
            row("g2-de-x-0", True, ["pasted_result"], "without to_converter"),
            row("g2-de-y-0", True, [], "without to_converter"),  # no as-is row: not paired
        ]) + "\n"
    )  # fmt: skip
    pooled = everyday.fired_pairs([first, second])
    assert sorted(pooled) == ["pasted_result", "to_converter"]
    assert [(a["id"], a["passed"], b["passed"]) for a, b in pooled["pasted_result"]] == [
        ("g1-en-x-0", True, False),
        ("g2-de-x-0", False, False),
    ]
    assert [(a["passed"], b["passed"]) for a, b in pooled["to_converter"]] == [(False, True)]


def test_a_result_file_with_a_broken_line_is_named_with_its_line(tmp_path: Path) -> None:
    everyday = _load(BENCH / "everyday.py")
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "passed": true}\n{"id": "b", "pass\n')
    with pytest.raises(SystemExit, match=r"r\.jsonl:2: not a result row"):
        everyday.fired_pairs([path])
