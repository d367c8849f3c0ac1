"""The parser against its corpus (tests/calling/corpus/*.jsonl).

``embedded.jsonl`` holds raw outputs of the embedded models (bench/capture_corpus.py), reviewed by
hand; ``formats.jsonl`` covers every text format in SPEC T2 plus broken JSON. Each line: ``text``,
the ``known`` tools, the ``expect``-ed calls, and optionally the ``rest`` text and ``repaired``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lar.calling.protocol import parse

CORPUS = Path(__file__).parent / "corpus"
CASES = [
    json.loads(line)
    for file in sorted(CORPUS.glob("*.jsonl"))
    for line in file.read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def test_corpus_size_and_mix() -> None:
    assert len(CASES) >= 60
    assert sum(c["id"].startswith("embedded-") for c in CASES) >= 20
    assert len({c["id"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parse(case: dict[str, Any]) -> None:
    result = parse(case["text"], case["known"])
    got = [{"name": c.name, "arguments": c.arguments} for c in result.calls]
    assert got == case["expect"]
    if "rest" in case:
        assert result.text == case["rest"]
    if "repaired" in case:
        assert result.repaired is case["repaired"]
    for call in result.calls:
        assert call.raw  # the original text is kept for the trace
