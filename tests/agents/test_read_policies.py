"""narrow_read: a whole-file read of a workspace file too long to be shown whole is read at the
request's longest word found in it; short files, tables, reads with a keyword or a range, and
requests none of whose words is in the file are left alone."""

from __future__ import annotations

import random
from pathlib import Path

from _fakes import call

from lar import Agent
from lar.agents.read_policies import narrowing_word
from lar.engines.scripted import ScriptedEngine
from lar.tools.builtin import file_read
from lar.types import Code, Notice

WORDS = "alpha beta gamma delta epsilon zeta theta iota kappa lambda sigma omega".split()


def long_config(tmp_path: Path, seed: int, version: str) -> str:
    """A generated settings file of 300 lines, longer than one result shows, with its version
    on a random line and the word "what" once in a comment."""
    rng = random.Random(seed)
    lines = [f"{rng.choice(WORDS)}_{i} = {rng.randint(0, 999)!r}" for i in range(300)]
    lines[rng.randrange(5, 280)] = f'version = "{version}"'
    lines[rng.randrange(280, 300)] = "# what the tools below read"
    (tmp_path / "settings.toml").write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def test_the_longest_word_of_the_request_in_the_file_is_chosen(tmp_path: Path) -> None:
    long_config(tmp_path, 3, "2.4.1")
    request = "What version does settings.toml declare?"
    assert narrowing_word(tmp_path, "settings.toml", request) == "version"
    # In other languages too: the word, not the language, decides.
    assert narrowing_word(tmp_path, "settings.toml", "Welche Version hat settings.toml?") == (
        "version"
    )


def test_files_shown_whole_anyway_and_tables_are_not_narrowed(tmp_path: Path) -> None:
    (tmp_path / "short.toml").write_text('name = "x"\nversion = "1.0"\n')
    assert narrowing_word(tmp_path, "short.toml", "What version does short.toml declare?") is None
    rows = ["region,amount,version"] + [f"north,{i},v{i}" for i in range(400)]
    (tmp_path / "sales.csv").write_text("\n".join(rows))
    assert narrowing_word(tmp_path, "sales.csv", "Total amount for north in sales.csv?") is None


def test_words_that_narrow_nothing_leave_the_read_whole(tmp_path: Path) -> None:
    long_config(tmp_path, 4, "0.9")
    # No word of the request stands alone in the file ("settings" is the file's own name).
    assert narrowing_word(tmp_path, "settings.toml", "Summarize settings.toml please") is None
    # A word on most lines ("alpha_3" does not hold "alpha" alone, but "=" lines are all).
    common = "\n".join(f"the line {i} of the long note" for i in range(300))
    (tmp_path / "note.txt").write_text(common)
    assert narrowing_word(tmp_path, "note.txt", "What does the note say?") is None
    # Outside the workspace, or no such file.
    assert narrowing_word(tmp_path, "../settings.toml", "What version?") is None
    assert narrowing_word(tmp_path, "missing.toml", "What version?") is None


def test_the_read_runs_at_the_word_and_shows_the_line_asked_for(tmp_path: Path) -> None:
    text = long_config(tmp_path, 5, "3.1.4")
    at = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("version"))
    steps = [call("file_read", path="settings.toml", keyword=""), "3.1.4"]
    agent = Agent(engine=ScriptedEngine(steps), tools=[file_read], workspace=tmp_path)  # type: ignore[arg-type]
    result = agent.run("What version does settings.toml declare?")
    (read,) = result.tool_calls
    assert read.arguments["keyword"] == "version"
    assert f'L{at}: version = "3.1.4"' in read.result
    assert "on 1 of 300 lines" in read.result
    assert len(read.result) < 1000  # not the file's first 3,200 characters
    said = [e for e in result.events if isinstance(e, Notice) and e.code == Code.NARROW_READ]
    assert said and "keyword='version'" in said[0].message


def test_a_read_with_a_range_or_a_keyword_is_left_as_asked(tmp_path: Path) -> None:
    long_config(tmp_path, 6, "1.0")
    steps = [
        call("file_read", path="settings.toml", start_line=1, end_line=20),
        call("file_read", path="settings.toml", keyword="alpha"),
        "done",
    ]
    agent = Agent(engine=ScriptedEngine(steps), tools=[file_read], workspace=tmp_path)  # type: ignore[arg-type]
    result = agent.run("Which version do lines 1 to 20 of settings.toml declare?")
    assert [c.arguments.get("keyword") for c in result.tool_calls] == [None, "alpha"]
    assert not [e for e in result.events if isinstance(e, Notice) and e.code == Code.NARROW_READ]


def test_a_name_in_a_request_written_without_spaces_is_found(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = ["，".join(rng.sample(["苹果", "河流", "窗户", "蜡烛", "篮子"], 3)) for _ in range(400)]
    lines[288] = "赵磊：茶壶，森林"
    (tmp_path / "riji.txt").write_text("\n".join(lines))
    assert narrowing_word(tmp_path, "riji.txt", "riji.txt的哪一行提到了赵磊？") == "赵磊"


def test_a_whole_read_asked_for_again_runs_as_asked(tmp_path: Path) -> None:
    long_config(tmp_path, 8, "5.0")
    steps = [
        call("file_read", path="settings.toml"),
        call("file_read", path="settings.toml", start_line=1),
        "5.0",
    ]
    agent = Agent(engine=ScriptedEngine(steps), tools=[file_read], workspace=tmp_path)  # type: ignore[arg-type]
    result = agent.run("What version does settings.toml declare?")
    assert [c.arguments.get("keyword") for c in result.tool_calls] == ["version", None]
    assert result.tool_calls[1].result.startswith("L1: ")
