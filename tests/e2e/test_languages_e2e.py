"""Help that holds in every language, on the real embedded model (protocol track).

The English-only embedder scores a Portuguese weather question 0.07 against a weather tool, as
low as an unrelated tool: the off-topic policy must then ask, not refuse, so the tool runs and
the answer carries its result. And a request no tool fits must get an answer that does not
pretend a tool ran; on the protocol track (text parser) and the constrained one (JSON Schema
decoding). The requests are this test's own, not eval cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lar.agents.agent import Agent
from lar.agents.results import RunResult
from lar.tools.base import SchemaTool
from lar.types import Notice

ran: list[tuple[str, dict[str, Any]]] = []


def weather_tool() -> SchemaTool:
    def get_weather(**args: Any) -> str:
        ran.append(("get_weather", args))
        return "18 C, sunny"

    return SchemaTool(
        "get_weather",
        "Current weather for a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        get_weather,
    )


TRACKS = pytest.mark.parametrize("track", ["protocol", "constrained"])


def ask(question: str, track: str) -> RunResult:
    ran.clear()
    agent = Agent(tools=[weather_tool()], track=track, memory=False, traces=False)  # type: ignore[arg-type]
    try:
        return agent.run(question)
    finally:
        agent.close()


@TRACKS
def test_a_portuguese_weather_question_calls_the_tool_and_answers_with_its_result(
    lar_home: Path, track: str
) -> None:
    result = ask("Como está o tempo em Lisboa?", track)
    assert [name for name, _ in ran] == ["get_weather"], result.events
    assert "lisb" in ran[0][1]["city"].lower()
    assert "18" in result.text, result.text
    refused = [e for e in result.events if isinstance(e, Notice) and e.code == "off_topic_call"]
    assert refused == []


@TRACKS
def test_a_request_no_tool_fits_gets_an_answer_that_does_not_claim_a_tool_ran(
    lar_home: Path, track: str
) -> None:
    result = ask("Who wrote the novel Don Quixote?", track)
    assert ran == [] and result.tool_calls == []
    text = result.text.lower()
    assert "cervantes" in text, result.text
    assert "get_weather" not in text and "sunny" not in text and "18 c" not in text


@pytest.mark.parametrize(
    ("language", "file", "question"),
    [
        ("pt", "compras.txt", "Qual é o maior número em compras.txt?"),
        ("es", "gastos.txt", "¿Cuál es el número más alto en gastos.txt?"),
        ("de", "ausgaben.txt", "Was ist die größte Zahl in ausgaben.txt?"),
    ],
)
def test_a_question_about_a_file_is_answered_in_its_own_language(
    lar_home: Path, tmp_path: Path, language: str, file: str, question: str
) -> None:
    """Issue 45, Must show 7: the value from the file, in the request's language (Lar names it
    after the tool result: ``agent.name_the_language``, on by default). The numbers are drawn
    from a seed; the judge is the draws' own: an answer is English when the frequent-word count
    and py3langid both say so (``lar.evals.everyday.in_english``)."""
    import random

    from lar.evals.everyday import in_english
    from lar.tools import builtin_tools

    rng = random.Random(f"45-{language}")
    numbers = [round(rng.uniform(10, 999), 2) for _ in range(rng.randint(8, 14))]
    work = tmp_path / "work"
    work.mkdir()
    (work / file).write_text("".join(f"{n:.2f}\n" for n in numbers))
    with Agent(tools=builtin_tools(), workspace=work, approver=lambda c, t: False) as agent:
        result = agent.run(question)
    text = result.text
    assert f"{max(numbers):.2f}".rstrip("0").rstrip(".") in text.replace(",", "."), text
    assert not in_english(text), text


@pytest.mark.parametrize(
    ("file", "request_"),
    [
        ("lista.txt", 'Crie um arquivo chamado lista.txt com o texto "pagar a conta de luz".'),
        ("termine.txt", 'Lege die Datei termine.txt mit dem Text "Zahnarzt am Freitag" an.'),
    ],
)
def test_a_refused_write_is_explained_in_the_requests_language(
    lar_home: Path, tmp_path: Path, file: str, request_: str
) -> None:
    """Issue 45: without --yes nothing is written, and the answer — Lar's own account of what
    was not run and how to allow it included (``agent.accounts_in_language``) — is in the
    request's language and names the flag to give (the draws' judge of English)."""
    import subprocess
    import sys

    from lar.evals.everyday import in_english

    out = subprocess.run(
        [sys.executable, "-m", "lar", "run", "--no-memory", request_],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / file).exists()
    assert "--yes" in out.stdout, out.stdout
    assert not in_english(out.stdout), out.stdout
