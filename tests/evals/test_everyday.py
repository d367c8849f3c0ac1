"""The everyday suite's format, its scoring and its runner (a scripted model; the embedded
model runs it in bench/everyday.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lar.config import LarConfig
from lar.engines.scripted import ScriptedEngine
from lar.evals.everyday import (
    EverydayRunner,
    SuiteError,
    Task,
    in_english,
    load_tasks,
    pasted,
    score,
    ungrounded,
)

SUITES = Path(__file__).parents[2] / "evals" / "everyday"


def call(name: str, **args: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def test_both_halves_load_with_distinct_ids_and_the_same_categories() -> None:
    dev, test = load_tasks(SUITES / "dev.yaml"), load_tasks(SUITES / "test.yaml")
    assert len(dev) + len(test) >= 60
    assert {t.category for t in dev} == {t.category for t in test}
    assert not {t.id for t in dev} & {t.id for t in test}
    assert {t.request for t in dev}.isdisjoint({t.request for t in test})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "- {id: a, category: c, request: r, expect: {has: [x]}, colour: red}",
            "unknown key 'colour'",
        ),
        ("- {id: a, category: c, expect: {has: [x]}}", "missing 'request'"),
        ("- {id: a, category: c, request: r, expect: {hass: [x]}}", "unknown expectation 'hass'"),
        (
            "- {id: a, category: c, request: r, expect: {has: [x]}}\n"
            "- {id: a, category: c, request: s, expect: {has: [y]}}",
            "task 'a': the id is used twice",
        ),
        ("id: a", "a YAML list of tasks"),
    ],
)
def test_a_malformed_task_file_names_the_file_task_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SuiteError, match=message) as info:
        load_tasks(path)
    assert str(path) in str(info.value)


def test_score_checks_the_answer_the_files_and_that_nothing_changed(tmp_path: Path) -> None:
    task = Task(
        "x", "c", "What is 2 + 40?",
        {"has": ["42"], "lacks": ["43"], "no_new_figures": True, "unchanged": True},
    )  # fmt: skip
    (tmp_path / "a.txt").write_text("a")
    before = {"a.txt": b"a"}
    assert score(task, "It is 42.", before, tmp_path) == ["answer gives figures no one gave: 42"]
    (tmp_path / "a.txt").write_text("b")
    failures = score(task, "It is 43.", before, tmp_path)
    assert "answer lacks '42'" in failures and "answer has '43'" in failures
    assert "the workspace changed" in failures


def test_the_runner_gives_each_task_its_workspace_and_counts_model_calls() -> None:
    task = Task(
        "d-sum", "files", "Sum the numbers in numbers.txt.", {"has": ["3"]},
        files={"numbers.txt": "1\n2\n"},
    )  # fmt: skip
    engine = ScriptedEngine(
        [
            call("file_read", path="numbers.txt"),
            call("calculate", expression="1 + 2"),
            "The sum is 3.",
        ]
    )
    runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=4)
    try:
        result = runner.run(task)
    finally:
        runner.close()
    assert result.passed, result.failures
    assert result.tools == ["file_read", "calculate"] and result.model_calls == 3
    assert result.prompt_tokens > 0


@pytest.mark.parametrize(
    ("answer", "wanted", "holds"),
    [
        ("There are 5 files.", "5", True),
        ("51 lines in total", "5", False),
        ("4,000 rows", "4", False),
        ("It is 2,340 km.", "2340", True),
        ("6 feet = 1.8288 m", "1.82", True),
        ("70 kg = 154.32 lb", "154.3", True),
        ("70 kg = 154.4 lb", "154.3", False),
        ("about 4.0 hours", "4", True),
        ("350 F = 176.666666667 C", "176", True),
        ("about 17.6 C", "176", False),
        ("Your dog is Biscuit.", "biscuit", True),
    ],
)
def test_a_wanted_number_is_a_figure_of_its_own(answer: str, wanted: str, holds: bool) -> None:
    task = Task("x", "c", "?", {"has": [wanted]})
    assert (score(task, answer, {}, Path(".")) == []) is holds


def test_a_figure_is_grounded_only_by_the_request_or_a_tool_result_of_the_run() -> None:
    sources = ["How many rows, and what total?", '{"result": "1.234,5"}']
    answer = "The total is 1234.5 over 17 rows (7 of them empty); see 2024."
    assert ungrounded(answer, sources) == ["17", "2024"]  # one-digit figures are phrasing
    assert ungrounded(answer, [*sources, "rows: 17, year 2024"]) == []


@pytest.mark.parametrize(("computed", "ungrounded_figures"), [(True, []), (False, ["42"])])
def test_the_runner_counts_a_figure_no_tool_gave(
    computed: bool, ungrounded_figures: list[str]
) -> None:
    task = Task(
        "d-sum", "files", "Sum the numbers in numbers.txt.", {"has": ["42"]},
        files={"numbers.txt": "10\n32\n"},
    )  # fmt: skip
    steps = [call("file_read", path="numbers.txt")]
    if computed:
        steps.append(call("calculate", expression="10 + 32"))
    engine = ScriptedEngine([*steps, "The sum is 42."], repeat_last=True)  # asked once to compute
    runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=4)
    try:
        result = runner.run(task)
    finally:
        runner.close()
    assert "42" in result.answer
    assert result.ungrounded == ungrounded_figures
    assert result.row()["ungrounded"] == ungrounded_figures
    made = ['file_read(path="numbers.txt")', *(['calculate(expression="10 + 32")'] * computed)]
    assert result.row()["calls"] == made  # what the model sent, for reading a failure


class MarkedEngine(ScriptedEngine):
    """A scripted engine that logs the prompt-cache marks it is asked to keep and restore."""

    def __init__(self, steps: list[str], *, can: bool = True) -> None:
        super().__init__(steps)  # type: ignore[arg-type]
        self.can, self.log = can, []  # type: list[str]

    async def set_mark(self, mark: str) -> bool:
        self.log.append(f"set {mark} after {len(self.calls)} calls")
        return self.can

    async def rewind(self, mark: str | None = None) -> bool:
        self.log.append(f"rewind {mark} after {len(self.calls)} calls")
        return self.can

    def drop_mark(self, mark: str) -> None:
        self.log.append(f"drop {mark}")


def test_a_repeatable_runner_starts_every_task_from_the_warm_up_s_cache() -> None:
    engine = MarkedEngine(["4", "one", "two"])
    runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=1, repeatable=True)
    mark = runner.mark
    assert mark is not None
    for n in ("one", "two"):
        assert runner.run(Task(n, "c", f"Say {n}.", {"has": [n]})).passed
    runner.close()
    engine.assert_complete()
    assert engine.log == [
        "rewind None after 0 calls",  # emptied, then the warm-up request
        f"set {mark} after 1 calls",
        f"rewind {mark} after 1 calls",
        f"rewind {mark} after 2 calls",
        f"drop {mark}",
    ]
    assert engine.calls[0][-1].content == EverydayRunner.WARM_UP


def test_an_engine_without_marks_runs_tasks_as_they_come() -> None:
    engine = MarkedEngine(["one"], can=False)
    runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=1, repeatable=True)
    assert runner.mark is None
    assert runner.run(Task("one", "c", "Say one.", {"has": ["one"]})).passed
    runner.close()
    assert engine.log == ["rewind None after 0 calls"]  # no warm-up, no mark


LISTING = "L1: 754\nL2: 599\nL3: 66\nL4: 151 apples in the north shed\nL5: 176 pears"


@pytest.mark.parametrize(
    ("answer", "copy"),
    [
        ("L1: 754 L2: 599 L3: 66 L4: 151 apples in the north shed", True),  # lines re-flowed
        ("L4: 151 apples in the north shed", True),
        ("wrote 8 characters to invoices.txt (create)", True),
        ("The north shed holds 151 apples.", False),  # the value in a sentence of its own
        ("151", False),  # too short to tell
        ("L4: 151 apples in the north shed, more than any other line of the file shows.", False),
        ("Os números: L4: 151 apples in the north shed\nL5: 176 pears", True),
    ],
)
def test_a_pasted_answer_is_a_tool_output_not_a_sentence_built_from_it(
    answer: str, copy: bool
) -> None:
    results = [LISTING, "wrote 8 characters to invoices.txt (create)"]
    assert pasted(answer, results) is copy
    assert not pasted(answer, ["something else entirely, nothing alike"])


def test_the_runner_fails_a_pasted_answer() -> None:
    task = Task(
        "d-line", "files", "What is on line 2 of n.txt?", {"has": ["599"]},
        files={"n.txt": "754\n599\n66\n151\n"},
    )  # fmt: skip
    lines = "L1: 754\nL2: 599\nL3: 66\nL4: 151"
    # asked once for a sentence (the pasted_result policy), it pastes the lines again
    engine = ScriptedEngine([call("file_read", path="n.txt"), lines, lines])
    runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=4)
    try:
        result = runner.run(task)
    finally:
        runner.close()
    assert result.pasted and not result.passed
    assert result.failures == ["the answer is a tool's output pasted, not an answer built from it"]


def test_a_task_s_files_show_the_same_time_in_every_run() -> None:
    # Listings show modification times: with the clock's, a task's prompt would differ from run
    # to run, and so would what the model does.
    task = Task(
        "d-list", "folders", "What is in docs?", {"has": ["a.txt"]}, files={"docs/a.txt": "x"}
    )
    engine = ScriptedEngine([call("folder_list", path="docs"), "docs holds a.txt."])
    runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=4)
    try:
        assert runner.run(task).passed
    finally:
        runner.close()
    shown = "\n".join(m.content for m in engine.calls[1])
    assert "a.txt" in shown and "2026-01-01" in shown


@pytest.mark.parametrize(
    ("answer", "english"),
    [
        ("The lowest value in relatorio.txt is 75.40.", True),
        ("There are 2 PDF files directly in this folder.", True),
        ("O menor valor em relatorio.txt é 75.40.", False),
        ("El archivo más grande es viaje.txt, con 684 bytes.", False),
        ("Die Datei notizen.txt hat 18 Zeilen.", False),
        ("Le total des dépenses est de 146,51 euros.", False),
        ("ideas.txt 共有 18 行。", False),
        ("146.51", False),  # a bare value is in no language
        ("relatorio.txt", False),
    ],
)
def test_in_english_tells_an_english_answer_from_one_in_the_requests_language(
    answer: str, english: bool
) -> None:
    assert in_english(answer) is english


def test_the_runner_fails_an_english_answer_to_a_request_in_another_language() -> None:
    task = Task(
        "d-lines", "files", "Quantas linhas tem o arquivo n.txt?", {"has": ["4"]},
        files={"n.txt": "754\n599\n66\n151\n"}, language="pt",
    )  # fmt: skip

    def run(answer: str) -> list[str]:
        engine = ScriptedEngine([call("file_read", path="n.txt"), answer])
        runner = EverydayRunner(LarConfig(), engine, track="protocol", max_turns=4)
        try:
            return runner.run(task).failures
        finally:
            runner.close()

    assert run("The file n.txt has 4 lines.") == ["the answer is in English, the request in pt"]
    assert run("O arquivo n.txt tem 4 linhas.") == []


def test_a_summary_quoting_a_files_sentences_is_not_a_pasted_output() -> None:
    # The read's result frames each line ("L3: "); an answer that quotes the sentences without
    # the frame is built from them (a short text's summary may well quote it), not pasted.
    read = (
        "L1: # Tidy\nL2: \nL3: Tidy sorts your downloads folder by file type.\nL4: \n"
        "L5: ## Install\nL6: \nL7: Run pip install tidy."
    )
    summary = "- Tidy sorts your downloads folder by file type.\n- Run pip install tidy."
    assert not pasted(summary, [read])
    assert pasted("L3: Tidy sorts your downloads folder by file type.\nL7: Run pip install tidy.",
                  [read])  # fmt: skip
    assert pasted("L1: 44 L2: 303 L3: 722 L4: 984", ["L1: 44\nL2: 303\nL3: 722\nL4: 984"])
