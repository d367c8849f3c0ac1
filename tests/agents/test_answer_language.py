"""The request's language named after a tool result (``agent.name_the_language``, on by
default since a dev-draw comparison): where a request is surely not in English, the
instruction the model reads last says which language to answer in; for English, an unsure
guess or the setting off, it names none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lar import Agent, tool
from lar.agents.request import render_history
from lar.calling.prompt import NEXT_STEP_TAIL, clean_answer
from lar.calling.relevance import request_language
from lar.config import load_config
from lar.engines.scripted import ScriptedEngine
from lar.types import Message, ToolCall


@pytest.mark.parametrize(
    ("request_", "language"),
    [
        ("Quantas linhas tem o arquivo relatorio.txt?", "Portuguese"),
        ("¿Cuál es el archivo más grande de esta carpeta?", "Spanish"),
        ("Wie viele Zeilen hat die Datei notizen.txt?", "German"),
        ("Quelle est la somme des nombres dans rapport.txt ?", "French"),
        ("文件 gouwu.txt 里的数字加起来是多少？", "Chinese"),
        # written without spaces: the file name and figures go, the words around them stay
        ("yusuan.txt一共几行？", "Chinese"),
        ("从1953-11-20到1957-10-11一共多少天？", "Chinese"),
        ("ファイルmemo.txtは何行ありますか？", "Japanese"),
        ("How many lines does ideas.txt have?", None),
        ("What is 79 degrees Fahrenheit in degrees Celsius?", None),
        ("notes.txt", None),  # no words: no language
        ("Borra ideas.md.", None),  # too short to be sure of
    ],
)
def test_the_request_language_is_named_only_when_sure_and_not_english(
    request_: str, language: str | None
) -> None:
    assert request_language(request_) == language


def _exchange(request_: str) -> list[Message]:
    call = ToolCall(id="c1", name="count_lines", arguments={"path": "a.txt"})
    return [
        Message("user", request_),
        Message("assistant", "", tool_calls=[call]),
        Message("tool", "12", tool_call_id="c1", name="count_lines"),
    ]


def test_the_tail_after_a_result_names_the_language() -> None:
    history = _exchange("Quantas linhas tem o arquivo relatorio.txt?")
    last = render_history(history, "protocol", answer_mode=False, name_the_language=True)[-1]
    assert last.content.endswith(NEXT_STEP_TAIL + " Write the answer in Portuguese.")
    off = render_history(history, "protocol", answer_mode=False, name_the_language=False)[-1]
    assert off.content.endswith(NEXT_STEP_TAIL)
    english = _exchange("How many lines does relatorio.txt have?")
    last = render_history(english, "protocol", answer_mode=False, name_the_language=True)[-1]
    assert last.content.endswith(NEXT_STEP_TAIL)


def test_a_copied_language_instruction_is_not_part_of_the_answer() -> None:
    assert clean_answer("O arquivo tem 12 linhas. Write the answer in Portuguese.") == (
        "O arquivo tem 12 linhas."
    )


@tool
def count_lines(path: str) -> str:
    """Count a file's lines."""
    return "12"


def _call() -> str:
    body = {"name": "count_lines", "arguments": {"path": "relatorio.txt"}}
    return "<tool_call>\n" + json.dumps(body) + "\n</tool_call>"


@pytest.mark.parametrize("on", [True, False])
def test_the_loop_names_it_when_the_config_says_so(
    lar_home: Path, tmp_path: Path, on: bool
) -> None:
    if not on:
        (lar_home / "config.yaml").write_text("agent:\n  name_the_language: false\n")
    assert load_config().agent.name_the_language is on  # on by default
    engine = ScriptedEngine([_call(), "O arquivo tem 12 linhas."])
    with Agent(engine=engine, tools=[count_lines], workspace=tmp_path) as agent:
        result = agent.run("Quantas linhas tem o arquivo relatorio.txt?")
    assert result.text == "O arquivo tem 12 linhas."
    second = [m for m in engine.calls[1] if m.role == "user"][-1].content
    assert ("Write the answer in Portuguese." in second) is on
    first = [m for m in engine.calls[0] if m.role == "user"][-1].content
    assert "Write the answer in" not in first  # before any result, nothing is added


def test_an_english_answer_is_asked_for_again_only_where_the_profile_adds_the_policy(
    lar_home: Path, tmp_path: Path
) -> None:
    """``english_answer`` is not in the default profile until a draw measures it;
    ``agent.policies: ["+english_answer"]`` adds it."""
    request = "文件 relatorio.txt 有多少行？请告诉我。"
    script = [_call(), "The file relatorio.txt has 12 lines.", "文件 relatorio.txt 共有 12 行。"]
    engine = ScriptedEngine(script)
    with Agent(engine=engine, tools=[count_lines], workspace=tmp_path) as agent:
        assert agent.run(request).text == "The file relatorio.txt has 12 lines."
    (lar_home / "config.yaml").write_text('agent:\n  policies: ["+english_answer"]\n')
    engine = ScriptedEngine(script)
    with Agent(engine=engine, tools=[count_lines], workspace=tmp_path) as agent:
        result = agent.run(request)
    assert result.text == "文件 relatorio.txt 共有 12 行。"
    assert "Write your answer in Chinese" in engine.calls[2][-1].content
