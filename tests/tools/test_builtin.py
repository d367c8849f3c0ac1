import asyncio
import time
from pathlib import Path

import pytest

from lar.tools.base import ToolContext
from lar.tools.builtin import (
    ask_user,
    code_run,
    file_patch,
    file_read,
    file_write,
    update_working_checkpoint,
)
from lar.tools.builtin.interaction import CHECKPOINT_KEY


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def test_file_read_ranges_and_keyword(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("\n".join(f"line {i}" for i in range(1, 11)))
    assert file_read("a.txt", ctx, start_line=2, end_line=3) == (
        "L2: line 2\nL3: line 3\n[lines 2-3 of 10; 7 more lines: read on with start_line=4]"
    )
    assert file_read("a.txt", ctx, keyword="LINE 10") == (
        "L8- line 8\nL9- line 9\nL10: line 10\n['LINE 10' appears 1 time, on 1 of 10 lines "
        "(line 10); lines marked '-' are only near it]"
    )
    missing = file_read("a.txt", ctx, keyword="zzz")
    assert missing.startswith("[no line contains 'zzz'; the whole file:]\nL1: line 1\n")
    with pytest.raises(FileNotFoundError, match="no file 'b.txt'"):
        file_read("b.txt", ctx)


def test_file_read_keyword_counts_every_occurrence_and_the_lines(ctx: ToolContext) -> None:
    (ctx.workspace / "log.txt").write_text("warn: disk\nok\nWARN warn\nok\nok\nok\nok\nend\n")
    out = file_read("log.txt", ctx, keyword="warn")
    assert out.splitlines()[-1] == (
        "['warn' appears 3 times, on 2 of 8 lines (lines 1, 3); lines marked '-' are only near "
        "them]"
    )
    assert "L1: warn: disk\nL2- ok\nL3: WARN warn\nL4- ok" in out
    assert "L8: end" not in out  # only the lines near a match


def test_file_read_keyword_with_many_matches_lists_only_them(ctx: ToolContext) -> None:
    (ctx.workspace / "log.txt").write_text("".join(f"{w}\n" for w in "ab" * 5 + "c"))
    out = file_read("log.txt", ctx, keyword="a")
    assert out == "L1: a\nL3: a\nL5: a\nL7: a\nL9: a\n['a' appears 5 times, on 5 of 11 lines]"


def test_file_read_long_file_says_how_to_continue(ctx: ToolContext) -> None:
    (ctx.workspace / "long.txt").write_text("\n".join(str(i) for i in range(1000)))
    out = file_read("long.txt", ctx)
    assert (
        out.splitlines()[-1] == "[lines 1-400 of 1000; 600 more lines: read on with start_line=401]"
    )


def test_file_write_modes(ctx: ToolContext) -> None:
    file_write("d/n.txt", "a", ctx)
    with pytest.raises(FileExistsError, match="use mode 'append' or 'overwrite'"):
        file_write("d/n.txt", "b", ctx)
    file_write("d/n.txt", "b", ctx, mode="append")
    assert (ctx.workspace / "d/n.txt").read_text() == "ab"
    file_write("d/n.txt", "c", ctx, mode="overwrite")
    assert (ctx.workspace / "d/n.txt").read_text() == "c"


def test_file_patch_must_match_exactly_once(ctx: ToolContext) -> None:
    f = ctx.workspace / "p.py"
    f.write_text("x = 1\ny = 1\n")
    with pytest.raises(ValueError, match="occurs 0 times.*file_write with mode 'append'"):
        file_patch("p.py", "z = 1", "z = 2", ctx)
    with pytest.raises(ValueError, match="occurs 2 times") as twice:
        file_patch("p.py", "= 1", "= 2", ctx)
    assert "append" not in str(twice.value)
    file_patch("p.py", "y = 1", "y = 2", ctx)
    assert f.read_text() == "x = 1\ny = 2\n"


def run_code(ctx: ToolContext, code: str, **kw: object) -> str:
    return asyncio.run(code_run.fn(code, ctx, **kw))


def test_code_run_python_prints_final_expression(ctx: ToolContext) -> None:
    assert run_code(ctx, "x = 6\nx * 7") == "exit_code: 0\nstdout:\n42"
    assert run_code(ctx, "print('hi')") == "exit_code: 0\nstdout:\nhi"


def test_code_run_shell_and_errors(ctx: ToolContext) -> None:
    out = run_code(ctx, "echo out; echo err >&2; exit 3", language="shell")
    assert out == "exit_code: 3\nstdout:\nout\nstderr:\nerr"
    assert "ZeroDivisionError" in run_code(ctx, "1/0")


def test_code_run_runs_in_the_workspace(ctx: ToolContext) -> None:
    assert run_code(ctx, "pwd", language="shell").endswith(str(ctx.workspace))


def test_code_run_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    beat = ctx.workspace / "beat"
    code = "(while true; do echo x >> beat; sleep 0.1; done) & sleep 30"
    out = run_code(ctx, code, language="shell", timeout_s=1)
    assert out == "exit_code: killed after 1s timeout"
    size = beat.stat().st_size
    time.sleep(1)  # a surviving background child would keep appending
    assert beat.stat().st_size == size


def test_code_run_truncates_huge_output(ctx: ToolContext) -> None:
    out = run_code(ctx, "print('y' * 200_000)")
    assert "[stdout truncated: " in out
    assert len(out) < 9000


def test_ask_user(ctx: ToolContext) -> None:
    with pytest.raises(RuntimeError, match="no user is available"):
        ask_user("Which file?", ctx)
    ctx.ask_user = lambda q: f"answer to {q}"
    assert ask_user("Which file?", ctx) == "answer to Which file?"


def test_working_checkpoint(ctx: ToolContext) -> None:
    assert update_working_checkpoint("goal: x", ctx) == "checkpoint saved"
    assert ctx.state[CHECKPOINT_KEY] == "goal: x"
    assert "clipped" in update_working_checkpoint("z" * 2000, ctx)
    assert len(ctx.state[CHECKPOINT_KEY]) == 1000


def test_code_run_refuses_hard_line_commands(ctx: ToolContext) -> None:
    marker = ctx.workspace / "ran"
    with pytest.raises(PermissionError, match="refused, never run: removes the root or home"):
        run_code(ctx, f"touch {marker}; rm -rf ~", language="shell")
    assert not marker.exists()
