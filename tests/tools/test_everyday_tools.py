"""folder_list, file_find, calculate, convert_units: read-only, so they run without
asking inside the workspace; outside it they ask; arithmetic is exact and never ``eval``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from lar.tools.base import ToolContext
from lar.tools.builtin import builtin_tools
from lar.tools.executor import ToolExecutor
from lar.types import Code, ToolCall, ToolResult

ASKED: list[str] = []  # the calls the last run asked the user about


def run(ws: Path, name: str, yes: bool = False, **args: object) -> ToolResult:
    ASKED.clear()

    def approver(call: ToolCall, tool: object) -> bool:
        ASKED.append(call.name)
        return yes

    executor = ToolExecutor(builtin_tools(), approver=approver)
    try:
        call = ToolCall("c", name, dict(args))
        return asyncio.run(executor.run(call, ToolContext(workspace=ws)))
    finally:
        executor.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\ny = 2\n")
    (root / "src" / "pkg" / "b.py").write_text("print('b')\n" * 10)
    (root / "notes.txt").write_text("n" * 5000)
    (root / ".secret").write_text("hidden")
    (root / "data.bin").write_bytes(b"\0\1\2" * 100)
    os.utime(root / "src" / "a.py", (1_700_000_000, 1_700_000_000))
    return root


def test_folder_list_shows_folders_then_files_with_sizes_and_no_hidden_names(ws: Path) -> None:
    r = run(ws, "folder_list")
    assert r.ok and ASKED == []
    lines = r.content.splitlines()
    assert lines[0] == "src/  (folder)"
    assert any(line.startswith("  notes.txt  4.9 KB") for line in lines)
    assert ".secret" not in r.content
    assert lines[-2] == "[2 files in all, 5300 bytes (5.2 KB); 1 folders, 1 hidden names not shown]"
    # With subfolders, what "including subfolders" asks: counts and bytes by kind, the largest.
    assert lines[-1] == (
        "[subfolders included: 4 files, 5422 bytes (5.3 KB) — Python files (.py): 2, 122 bytes; "
        ".bin files: 1, 300 bytes; text files (.txt): 1, 5000 bytes (4.9 KB); largest: notes.txt, "
        "5000 bytes (4.9 KB)]"
    )


def test_folder_list_groups_files_by_kind_under_their_count(tmp_path: Path) -> None:
    for name in ("a.jpg", "b.png", "c.jpg", "list.txt", "x.q9"):
        (tmp_path / name).write_text("x")
    lines = run(tmp_path, "folder_list").content.splitlines()
    # Extensions of one kind share a group, the largest first, each file under its group.
    assert lines[0] == "image files (.jpg, .png): 3"
    assert [ln.split()[0] for ln in lines[1:4]] == ["a.jpg", "b.png", "c.jpg"]
    assert lines[lines.index(".q9 files: 1") + 1].startswith("  x.q9  1 bytes")
    assert "text files (.txt): 1" in lines
    assert lines[-1] == "[5 files in all, 5 bytes; 0 folders]"


def test_folder_list_of_one_kind_has_no_group_header(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    lines = run(tmp_path, "folder_list").content.splitlines()
    assert lines[0].startswith("a.md  1 bytes") and lines[1].startswith("b.md  1 bytes")
    assert lines[-1] == "[2 files in all, 2 bytes; 0 folders]"


def test_a_folder_tool_given_a_file_gives_its_size_and_lines_first(ws: Path) -> None:
    r = run(ws, "folder_list", path="src/a.py")
    assert r.ok
    first = r.content.splitlines()[0]
    assert first.startswith("[src/a.py is a file, not a folder: 12 bytes, 2 lines, changed 2023-")
    assert r.content.splitlines()[1] == "L1: x = 1"


def test_file_find_in_one_file_looks_for_a_word_that_is_not_its_name(ws: Path) -> None:
    (ws / "app.log").write_text("start\nfail: disk\nok\nfail: net\n")
    found = run(ws, "file_find", pattern="fail", path="app.log").content
    assert found.startswith("[app.log is a file, not a folder: 30 bytes, 4 lines, changed ")
    assert "; lines with 'fail':]" in found
    assert found.splitlines()[-1] == (
        "['fail' appears 2 times, on 2 of 4 lines (lines 2, 4); lines marked '-' are only near "
        "them]"
    )
    by_name = run(ws, "file_find", pattern="*.log", path="app.log").content
    assert "; its content:]" in by_name and "appears" not in by_name


def test_spaces_around_a_path_are_dropped_unless_such_a_name_exists(ws: Path) -> None:
    assert run(ws, "folder_list", path=" src ").ok
    assert run(ws, "file_read", path=" notes.txt").ok
    (ws / " spaced.txt").write_text("mine\n")
    (ws / "spaced.txt").write_text("other\n")
    assert "L1: mine" in run(ws, "file_read", path=" spaced.txt").content


def test_file_read_of_a_whole_file_says_its_lines_and_size(ws: Path) -> None:
    whole = run(ws, "file_read", path="src/a.py").content
    assert whole.splitlines()[-1] == "[the whole file: 2 lines, 6 words, 12 bytes]"
    part = run(ws, "file_read", path="src/pkg/b.py", start_line=2, end_line=3).content
    assert "the whole file" not in part


def test_file_find_counts_files_and_lines_under_subfolders(ws: Path) -> None:
    r = run(ws, "file_find", pattern="*.py", path="src")
    assert r.ok
    assert "src/a.py  12 bytes  2 lines" in r.content
    assert "src/pkg/b.py" in r.content and "10 lines" in r.content
    assert r.content.splitlines()[-1].startswith("[total: 2 files matching '*.py'")
    assert "12 lines]" in r.content
    (ws / "src" / "pkg" / "big.py").write_text("#" * 2000)
    total = run(ws, "file_find", pattern="*.py", path="src").content.splitlines()[-1]
    assert ", 2122 bytes (2.1 KB), " in total  # a total in bytes, as a question asks it


def test_the_words_of_one_file_are_counted_as_wc_does(ws: Path) -> None:
    import random

    rng = random.Random(3)
    lines = [" ".join("w" * rng.randint(1, 6) for _ in range(rng.randint(0, 9))) for _ in range(30)]
    (ws / "prose.txt").write_text("\n".join(lines) + "\n")
    words = sum(len(line.split()) for line in lines)
    whole = run(ws, "file_read", path="prose.txt").content.splitlines()[-1]
    assert (
        whole
        == f"[the whole file: 30 lines, {words} words, {(ws / 'prose.txt').stat().st_size} bytes]"
    )
    assert f"30 lines  {words} words" in run(ws, "file_find", pattern="prose.txt").content
    assert " words" not in run(ws, "file_find", pattern="*.py").content  # one file only
    (ws / "zh.txt").write_text("今天去超市买牛奶\n明天去银行\n")  # no spaces between words
    assert "words" not in run(ws, "file_read", path="zh.txt").content


def test_file_find_takes_an_extension_alone_as_the_files_ending_so(ws: Path) -> None:
    r = run(ws, "file_find", pattern=".py", path="src")
    assert r.ok and r.content.splitlines()[-1].startswith("[total: 2 files matching '*.py'")
    (ws / ".py").write_text("a file named so\n")  # where such a name exists, it is the one
    assert "[total: 1 files matching '.py'" in run(ws, "file_find", pattern=".py").content
    assert "no file matches '.pdf' or '*.pdf'" in run(ws, "file_find", pattern=".pdf").content


def test_file_find_sorts_by_size_and_date(ws: Path) -> None:
    largest = run(ws, "file_find", sort="size").content.splitlines()[0]
    assert largest.startswith("notes.txt")
    newest_last = run(ws, "file_find", sort="newest").content.splitlines()
    assert newest_last[len(newest_last) - 2].startswith("src/a.py")  # the oldest, before totals


def test_outside_the_workspace_they_ask_and_read_only_with_a_yes(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("hello")
    denied = run(ws, "folder_list", path=str(other))
    assert not denied.ok and ASKED == ["folder_list"]
    assert "outside the workspace" in denied.content and str(ws) in denied.content
    allowed = run(ws, "folder_list", yes=True, path=str(other))
    assert allowed.ok and "x.txt" in allowed.content
    write = run(ws, "file_write", yes=True, path=str(other / "y.txt"), content="no")
    assert not write.ok and not (other / "y.txt").exists()  # writes outside stay refused


def test_reading_a_folder_points_to_folder_list(ws: Path) -> None:
    r = run(ws, "file_read", path="src")
    assert not r.ok and "folder_list" in r.content


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("17% of 2,340", "397.8"),
        ("(12.5 + 7.25) * 3", "59.25"),
        ("sum(4, 8.5, 15, 23)", "50.5"),
        ("sum([12.5, 7.25, 30, 0.75])", "50.5"),  # a list, as Python writes it
        ("average(12, 15, 21, 30)", "19.5"),
        ("mean([1, 2])", "1.5"),
        ("2^10", "1024"),
        ("1,234,567 + 1", "1234568"),
        ("max(1,234)", "234"),  # inside a call, commas separate arguments
        ("0.1 + 0.2", "0.3"),
    ],
)
def test_calculate_reads_arithmetic_as_people_write_it(
    ws: Path, expression: str, value: str
) -> None:
    r = run(ws, "calculate", expression=expression)
    assert r.ok and ASKED == [] and r.content.endswith(f"= {value}")


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('id')",
        "open('/etc/passwd')",
        "9**9**9**9",
        "1/0",
        "sum([1] * 10**8)",  # lists are bounded too
        "[1, 2]",  # not a number
        "mean([])",
    ],
)
def test_calculate_refuses_what_is_not_bounded_arithmetic(ws: Path, expression: str) -> None:
    r = run(ws, "calculate", expression=expression)
    assert not r.ok and "calculate failed" in r.content


def test_calculate_refuses_a_figure_that_is_not_worked_out(ws: Path) -> None:
    """A number alone, or a name set to one, computes nothing: its "result" would let a figure
    the model made up pass as calculated (it wrote ``total_north = 12345`` after its code
    failed, and the answer then quoted the tool)."""
    for expression in ("12345", "total_north_region = 12345", "-7.5"):
        r = run(ws, "calculate", expression=expression)
        assert not r.ok and "computes nothing" in r.content, r.content
    assigned = run(ws, "calculate", expression="total = 3 * 4")  # the right side is worked out
    assert assigned.ok and assigned.content.endswith("= 12")
    code = run(ws, "calculate", expression="sum(map(lambda r: r[2], rows))")
    assert not code.ok and "code_run" in code.content
    kept = run(ws, "calculate", expression="sum([x * 2 for x in [1, 2, 3]])")  # as before
    assert kept.ok and kept.content.endswith("= 12"), kept.content
    assert "empty" in run(ws, "calculate", expression=" ").content
    program = run(ws, "calculate", expression="a = 2\nb = a * 3")
    assert not program.ok and "code_run" in program.content


def test_calculate_reads_the_numbers_of_a_workspace_file_it_names(ws: Path, tmp_path: Path) -> None:
    (ws / "numbers.txt").write_text("12.5\n7.25\n\n30\n0.75\n")
    (ws / "budget.md").write_text("# Budget\nrent: 850\nfood: 1,200.50\n")
    (ws / "spent.csv").write_text("date,item,amount\n2026-01-03,coffee,3.50\n")
    (tmp_path / "outside.txt").write_text("1\n2\n")
    r = run(ws, "calculate", expression="sum(numbers.txt)")
    assert r.ok and ASKED == []
    assert r.content == "sum(numbers.txt) = 50.5 (numbers.txt: 12.5, 7.25, 30, 0.75)"
    assert run(ws, "calculate", expression="mean('numbers.txt')").content.startswith(
        "mean('numbers.txt') = 12.625"
    )
    assert (
        "= 2050.5 (budget.md: 850, 1200.50)"
        in run(ws, "calculate", expression="sum(budget.md)").content
    )
    # A line with several numbers (a date, an amount) is not guessed at: it is named.
    csv = run(ws, "calculate", expression="sum(spent.csv)")
    assert not csv.ok and "line 2 of spent.csv holds several numbers" in csv.content
    missing = run(ws, "calculate", expression="sum(prices.txt)")
    assert not missing.ok and "no file 'prices.txt' in the workspace" in missing.content
    dotted = run(ws, "calculate", expression="AAPL.currentPrice * 2")  # a name, not a file
    assert not dotted.ok and "no file" not in dotted.content
    assert "gives a list" in run(ws, "calculate", expression="numbers.txt").content
    # Only the workspace is read, and without asking nothing outside it is.
    outside = run(ws, "calculate", expression="sum(../outside.txt)")
    assert not outside.ok and ASKED == [] and "outside the workspace" in outside.content


def test_convert_units_handles_lengths_temperatures_and_says_what_is_wrong(ws: Path) -> None:
    assert run(ws, "convert_units", value=26.2, from_unit="miles", to_unit="km").content == (
        "26.2 miles = 42.1648128 km"
    )
    assert run(ws, "convert_units", value=212, from_unit="F", to_unit="C").content == (
        "212 F = 100 C"
    )
    kinds = run(ws, "convert_units", value=1, from_unit="kg", to_unit="km")
    assert not kinds.ok and "different kinds" in kinds.content
    unknown = run(ws, "convert_units", value=1, from_unit="florbs", to_unit="km")
    assert not unknown.ok and "unknown unit" in unknown.content


@pytest.mark.parametrize(
    ("source", "target"), [("pesos", "rupees"), ("USD", "BRL"), ("EUR", "JPY")]
)
def test_a_currency_conversion_says_lar_has_no_exchange_rates(
    ws: Path, source: str, target: str
) -> None:
    result = run(ws, "convert_units", value=50, from_unit=source, to_unit=target)
    assert not result.ok and result.error is not None
    assert result.error.code == Code.NOT_POSSIBLE
    assert "Lar cannot convert currencies" in result.content


def test_a_folder_tool_given_a_file_shows_the_file_and_a_url_names_web_scan(ws: Path) -> None:
    r = run(ws, "file_find", path="notes.txt")
    assert r.ok and r.content.startswith("[notes.txt is a file, not a folder: 4.9 KB, 1 line")
    assert "; its content:]\nL1: " in r.content
    url = run(ws, "folder_list", path="http://127.0.0.1:8000/page.html")
    assert not url.ok and "web_scan fetches it" in url.content
    read = run(ws, "file_read", path="https://example.org/a.txt")
    assert not read.ok and "web_scan fetches it" in read.content


def test_what_lar_cannot_do_is_answered_by_the_tools_account_with_no_model_call_after(
    ws: Path,
) -> None:
    """A call that fails with ``not_possible`` (no exchange rates) ends the run with the tool's
    own account of what would make it possible: no model call to restate or contradict it."""
    import json

    from lar import Agent
    from lar.engines.scripted import ScriptedEngine

    args = {"value": 50, "from_unit": "USD", "to_unit": "BRL"}
    step = json.dumps({"name": "convert_units", "arguments": args})
    engine = ScriptedEngine([f"<tool_call>\n{step}\n</tool_call>", "50 USD is 250 BRL."])
    result = Agent(engine=engine, tools=builtin_tools(), workspace=ws).run("50 USD in BRL?")
    direct = run(ws, "convert_units", **args)
    assert direct.error is not None and result.text == direct.error.detail
    assert result.text.startswith("Lar cannot convert currencies (USD to BRL)")
    assert len(engine.calls) == 1


def test_unit_factor_knows_common_factors_to_the_precision_written() -> None:
    from lar.tools.builtin.calc import unit_factor

    for known in ("2.20462", "0.3048", "1.60934", "3.785", "236.588", "0.453592"):
        assert unit_factor(known), known
    for made_up in ("157.37", "107.37", "1.2745", "7.46"):
        assert not unit_factor(made_up), made_up
    # When the request names two units of one kind, the factor must be between them.
    assert unit_factor("0.9144", "How many metres is 40 yards?")
    assert not unit_factor("1.60934", "How many metres is 40 yards?")  # miles' factor
    assert unit_factor("1.60934", "Quantos quilómetros são 5 milhas?")  # words pint lacks
