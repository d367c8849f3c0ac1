from __future__ import annotations

from pathlib import Path

import pytest

from lar.errors import LarError
from lar.jsonl import read_jsonl


class Custom(LarError):
    pass


def test_rows_come_with_their_line_numbers(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_text('# a comment\n{"a": 1}\n\n[2]\n')
    assert list(read_jsonl(f, comments=True)) == [(2, {"a": 1}), (4, [2])]


def test_comments_are_json_errors_unless_allowed(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_text('{"a": 1}\n# note\n')
    with pytest.raises(Custom, match=rf"^{f}:2: invalid JSON: Expecting value \(column 1\)$"):
        list(read_jsonl(f, error=Custom))


def test_an_unreadable_file_fails_at_the_call_not_while_iterating(tmp_path: Path) -> None:
    missing = tmp_path / "none.jsonl"
    with pytest.raises(Custom, match=rf"^{missing}: cannot read: "):
        read_jsonl(missing, error=Custom)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(LarError, match="cannot read"):
        read_jsonl(binary)
