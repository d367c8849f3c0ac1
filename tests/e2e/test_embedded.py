"""The real embedded model (Qwen2.5-Coder-1.5B-Instruct via llama.cpp), greedy decoding."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lar.tools.sandbox import isolation_level


def _readme_block(heading: str) -> str:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split(heading, 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_python_api_example_from_the_readme(lar_home: Path) -> None:
    namespace: dict[str, object] = {}
    exec(compile(_readme_block("### Python API"), "README.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert "5555" in result.text  # type: ignore[attr-defined]
    calls = [(c.name, c.arguments, c.result) for c in result.tool_calls]  # type: ignore[attr-defined]
    assert calls == [("add", {"a": 1234, "b": 4321}, 5555)]


def lar_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lar", "run", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.timeout(600)  # two runs, the first from a cold start
def test_the_install_demo_answers_in_two_calls_the_same_twice(
    lar_home: Path, tmp_path: Path
) -> None:
    # install.sh's demo on the project's own pyproject.toml (about 1,200 tokens when read
    # whole): the version, read without confirmation, in at most two model calls, and the same
    # answer on a second run in the same home (its working memory steers nothing).
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text())["project"]["version"]
    (tmp_path / "pyproject.toml").write_text(pyproject.read_text())
    answers = []
    for _ in range(2):
        out = lar_run("What version does pyproject.toml declare?", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert version in out.stdout
        # read without confirmation; the model may add other arguments (keyword=, …)
        assert re.search(
            r'^tool: file_read\([^\n]*path="pyproject\.toml"[^\n]*\) ok', out.stderr, re.M
        )
        assert len(re.findall(r"^llm: ", out.stderr, re.M)) <= 2, out.stderr
        answers.append(out.stdout.strip())
    assert answers[0] == answers[1]


def test_cli_run_uses_code_run_and_answers(lar_home: Path, tmp_path: Path) -> None:
    out = lar_run("--yes", "What is 1234 * 5678? Use code_run.", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "7006652" in out.stdout
    assert "tool: code_run(" in out.stderr and " ok, " in out.stderr
    assert "llm: qwen2.5-coder-1.5b-instruct" in out.stderr


def test_chat_streams_and_runs_code_that_changes_nothing_unasked(
    lar_home: Path, tmp_path: Path
) -> None:
    pexpect = pytest.importorskip("pexpect", reason="pexpect is a dev dependency")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "lar", "chat"],
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=240,
        use_poll=True,  # select() fails on a descriptor numbered past 1023 late in a long run
    )
    try:
        child.expect("you> ")
        child.sendline("What is 1234 * 5678? Use code_run.")
        if isolation_level() == "bubblewrap":
            # it ran on a copy first and changed nothing: no one is asked (a run that changes
            # something is asked about: tests/tools/test_staging.py)
            seen = child.expect([r"← ok: exit_code: 0 stdout: 7006652", r"Apply\? \[y/N\]"])
            assert seen == 0, "a run that changed nothing was asked about"
            child.expect("7006652")  # and the answer carries what it printed
        else:  # no copy can be made: asked before the run
            child.expect(r"Allow\? \[y/N\]")
            child.sendline("y")
            child.expect("7006652")
        child.expect("you> ")
        child.sendline("/reset")
        child.expect("conversation cleared")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_sessions_example_from_the_readme(lar_home: Path) -> None:
    """Two sessions of one agent at once on the embedded model, each with its own answer."""
    namespace: dict[str, object] = {}
    exec(compile(_readme_block("### One agent, many sessions"), "README.md", "exec"), namespace)  # noqa: S102
    answers = namespace["answers"]
    assert isinstance(answers, list) and len(answers) == 2
    assert "42" in answers[0] and "123" in answers[1], answers
