"""table_by_code: a question about a table file of the workspace that the model tries without
code (a keyword search, calculate over a column, a total in its head) is asked once for Python
over the file, shown the file's columns and first rows; edits, other files and runs without a
code tool are left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _fakes import call

from lar import Agent, tool
from lar.agents.table_policies import table_shape
from lar.engines.scripted import ScriptedEngine
from lar.types import Code, Notice

RAN: list[str] = []


@tool(read_only=True, broad=True)  # as the built-ins: never judged by similarity
def file_read(path: str, keyword: str = "") -> str:
    """Read a file.

    Args:
        path: The file.
        keyword: Only the lines holding this.
    """
    RAN.append(f"file_read {path}")
    return "region,amount\nnorth,10.5\n"


@tool(permission="confirm", broad=True)
def file_write(path: str, content: str) -> str:
    """Write text to a file, replacing what it held.

    Args:
        path: The file to write.
        content: The text to write.
    """
    RAN.append(f"file_write {path}")
    return "written"


@tool(read_only=True, broad=True)  # as the built-ins: never judged by similarity
def calculate(expression: str) -> str:
    """Work out arithmetic; a file's name stands for its numbers.

    Args:
        expression: The arithmetic.
    """
    RAN.append("calculate")
    return f"{expression} = 10.5"


@tool(read_only=True, broad=True)  # as the built-ins: never judged by similarity
def code_run(code: str) -> str:
    """Run Python.

    Args:
        code: The program.
    """
    RAN.append("code_run")
    return "exit_code: 0\nstdout:\n723.12"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    rows = ["region,product,amount", "south,item0,55.57", "north,item1,130.20"]
    rows += [f"{r},item{i},{i}.25" for i, r in enumerate(["north", "east"] * 6, start=2)]
    (tmp_path / "sales.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "notes.txt").write_text("Call the bank, then the dentist.\nBuy milk.\nPay rent.\n")
    return tmp_path


def run(steps: list[str], request: str, ws: Path, tools: list[object] | None = None):  # type: ignore[no-untyped-def]
    engine = ScriptedEngine(steps)  # type: ignore[arg-type]
    offered = tools if tools is not None else [file_read, file_write, code_run]
    agent = Agent(engine=engine, tools=offered, workspace=ws, approver=lambda c, t: True)
    return agent.run(request), engine


def codes(result: object) -> list[str]:
    return [e.code for e in result.events if isinstance(e, Notice)]  # type: ignore[attr-defined]


def test_a_search_of_a_table_is_asked_once_for_code_shown_the_columns(ws: Path) -> None:
    steps = [
        call("file_read", path="sales.csv", keyword="north"),
        call("code_run", code="import pandas as pd\nprint(pd.read_csv('sales.csv')...)"),
        "The north region totals 723.12.",
    ]
    result, engine = run(steps, "What is the total amount for north in sales.csv?", ws)
    assert result.text == "The north region totals 723.12."
    assert Code.TABLE_BY_CODE in codes(result)
    assert RAN == ["code_run"]  # the search was not run: the code was asked for instead
    nudge = engine.calls[1][-1].content
    assert "14 rows" in nudge and "region, product, amount" in nudge
    assert "south,item0,55.57" in nudge  # the values' spelling, so a filter matches
    assert '"name": "code_run"' in nudge


def test_it_asks_only_once(ws: Path) -> None:
    search = call("file_read", path="sales.csv", keyword="north")
    result, _ = run([search, search, "10.5"], "Total of north in sales.csv?", ws)
    assert codes(result).count(Code.TABLE_BY_CODE) == 1
    assert RAN == ["file_read sales.csv"] and result.text == "10.5"


def test_calculate_over_a_table_is_asked_for_code(ws: Path) -> None:
    steps = [
        call("calculate", expression="sum(sales.csv)"),
        call("code_run", code="pd.read_csv('sales.csv')"),
        "723.12",
    ]
    result, _ = run(steps, "Total of sales.csv?", ws, tools=[file_read, calculate, code_run])
    assert Code.TABLE_BY_CODE in codes(result) and RAN == ["code_run"]


def test_a_plain_read_runs_and_a_figure_worked_out_from_it_is_asked_for_code(ws: Path) -> None:
    steps = [
        call("file_read", path="sales.csv"),
        "The north total is 140.7.",  # 10.5 was all the read showed: worked out in its head
        call("code_run", code="..."),
        "The north total is 723.12.",
    ]
    result, _ = run(steps, "Total of north in sales.csv?", ws)
    assert RAN == ["file_read sales.csv", "code_run"]
    assert Code.TABLE_BY_CODE in codes(result) and result.text == "The north total is 723.12."


def test_a_read_before_an_edit_is_not_turned_into_code(ws: Path) -> None:
    steps = [
        call("file_read", path="sales.csv"),
        call("file_read", path="sales.csv"),  # more_calls asks whether "and" needs more: no
        call("file_write", path="sales.csv", content="region,amount\nnorth,10.5\nwest,7\n"),
        "Added.",
        "Added.",
    ]
    result, engine = run(steps, "Add the row west,7 at the end of sales.csv", ws)
    assert RAN == ["file_read sales.csv", "file_write sales.csv"]
    assert Code.TABLE_BY_CODE not in codes(result)


def test_a_figure_worked_out_without_any_call_is_asked_for_code(ws: Path) -> None:
    steps = ["The total is 999.", call("code_run", code="..."), "The total is 723.12."]
    result, _ = run(steps, "Total of north in sales.csv?", ws, tools=[file_write, code_run])
    assert Code.TABLE_BY_CODE in codes(result) and result.text == "The total is 723.12."


@pytest.mark.parametrize(
    ("steps", "request_", "why"),
    [
        (
            [call("code_run", code="pd.read_csv('sales.csv')"), "723.12"],
            "Total of north in sales.csv?",
            "code first",
        ),
        (
            [call("file_write", path="sales.csv", content="a,b\n"), "Done.", "Done."],
            "Write the text a,b to the file sales.csv",
            "an edit",
        ),
        (["It has a header."], "What is sales.csv?", "no figure in the answer"),
    ],
)
def test_left_alone(ws: Path, steps: list[str], request_: str, why: str) -> None:
    # no file_read offered: unread_file (a file named and never read) stays out of it
    result, engine = run(steps, request_, ws, tools=[file_write, code_run])
    assert Code.TABLE_BY_CODE not in codes(result), why
    assert not any("is a table of" in m.content for sent in engine.calls for m in sent), why


def test_a_file_that_is_not_a_table_is_left_alone(ws: Path) -> None:
    steps = [call("file_read", path="notes.txt"), "Three."]
    result, engine = run(steps, "How many lines in notes.txt?", ws)
    assert Code.TABLE_BY_CODE not in codes(result) and len(engine.calls) == 2


def test_without_a_code_tool_nothing_is_asked(ws: Path) -> None:
    steps = [call("file_read", path="sales.csv"), "10.5"]
    result, engine = run(steps, "Total of north in sales.csv?", ws, tools=[file_read])
    assert Code.TABLE_BY_CODE not in codes(result) and len(engine.calls) == 2


def test_table_shape_reads_the_content_not_the_suffix(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("name;price\nTee;3,50\nCafé;2,10\nPão;0,40\n")
    (tmp_path / "b.data").write_text("x\ty\tz\n1\t2\t3\n4\t5\t6\n")
    records = [{"who": "Ana", "amount": 3.5}, {"who": "Rui", "amount": 7}]
    (tmp_path / "c.json").write_text(json.dumps(records, ensure_ascii=False))
    (tmp_path / "d.csv").write_text("a,b\n1,2\n")  # a header and one row: too little to tell
    (tmp_path / "e.txt").write_text("Hello, world.\nOne line, two commas, here.\nNo comma\n")
    (tmp_path / "f.json").write_text('{"version": "0.1.0"}')
    assert table_shape(tmp_path, "a.csv") == (
        "a.csv",
        3,
        ["name", "price"],
        ["Tee;3,50", "Café;2,10"],
    )
    assert table_shape(tmp_path, "b.data") == ("b.data", 2, ["x", "y", "z"], ["1\t2\t3", "4\t5\t6"])
    shape = table_shape(tmp_path, "c.json")
    assert shape is not None and shape[:3] == ("c.json", 2, ["who", "amount"])
    (tmp_path / "g.js").write_text("'use strict';\nconst a = 1;\nconst b = 2;\nf(a, b);\n")
    (tmp_path / "h.md").write_text("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n")
    (tmp_path / "i.txt").write_text("1,200\n3,400\n5,600\n")  # numbers, no header
    (tmp_path / "j.json").write_text("[" * 100_000 + "]" * 100_000)
    for name in ("d.csv", "e.txt", "f.json", "missing.csv", "g.js", "h.md", "i.txt", "j.json"):
        assert table_shape(tmp_path, name) is None, name
    # a byte-order mark is not part of the first column's name
    (tmp_path / "k.csv").write_bytes("\ufeffid,name\n1,a\n2,b\n".encode())
    assert table_shape(tmp_path, "k.csv") == ("k.csv", 2, ["id", "name"], ["1,a", "2,b"])
    # a JSON list longer than the first lines peeked at is still read
    big = [{"who": f"person {i}", "amount": i} for i in range(400)]
    (tmp_path / "l.json").write_text(json.dumps(big, indent=1))
    shape = table_shape(tmp_path, "l.json")
    assert shape is not None and shape[1:3] == (400, ["who", "amount"])


def test_a_table_outside_the_workspace_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.csv").write_text("user,password\nana,hunter2\nrui,swordfish\n")
    assert table_shape(ws, "../secret.csv") is None
    assert table_shape(ws, str(tmp_path / "secret.csv")) is None
