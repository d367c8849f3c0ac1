"""`lar role validate` and the load-time checks: each defect with its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from roles_helpers import CONTRACT_ROLE, LOG_ROLE, lar, line_of

from lar.roles import RoleFileError, ToolImpl, check_registration, load_role, validate
from lar.roles.library import BUILTIN_CAPABILITIES

BROKEN = """\
name: broken
version: 0.1.0
role: A role with one of each defect.
inputs:
  document: a file
capabilities:
  - name: documents
    builtin: documents
  - name: clauses
    builtin: clauses
tools:
  read_text:
    input: {path: string}
    output:
      status: string
      total_pages: integer
  split_clauses:
    determinism: nondeterministic
    input: {text: string}
    output: {status: string, clause_count: integer}
pipelines:
  intake:
    steps:
      - name: document
        tool: read_text
        input: {path: $request.document}
  split:
    steps:
      - name: parsing
        tool: split_clauses
        input: {text: $request.text}
states:
  RECEIVING:
    run: intake
    next:
      - to: PARSING
        when: document.page_total > 0
      - to: DONE
  PARSING:
    run: split
    next:
      - to: PARSING
  ORPHAN:
    next:
      - to: DONE
  DONE:
    final: true
start: RECEIVING
"""


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    file = tmp_path / "agent.yaml"
    file.write_text(BROKEN)
    return file


def test_every_defect_is_reported_with_its_file_and_line(broken: Path) -> None:
    role = load_role(broken)
    impls = {n: t for c in BUILTIN_CAPABILITIES.values() for n, t in c.tools.items()}
    problems = {p.message: p for p in validate(role, impls)}
    text = BROKEN

    def find(fragment: str) -> int:
        hits = [p for m, p in problems.items() if fragment in m]
        assert hits, f"no problem says {fragment!r}: {list(problems)}"
        assert hits[0].file == broken.resolve()
        return hits[0].line

    assert find("state 'ORPHAN' is unreachable") == line_of(text, "ORPHAN:")
    assert find("state 'PARSING' is a dead end: no final state") == line_of(
        text, "PARSING:", "states:"
    )
    # the guard names the field it reads and the fields the tool does return
    guard = find("reads 'document.page_total', but tool 'read_text' returns no field")
    assert guard == line_of(text, "when: document.page_total")
    assert "its contract returns: status, total_pages" in next(
        m for m in problems if "page_total" in m
    )
    # the role expects total_pages; the real tool returns total_lines: both names are given
    mismatch = next(m for m in problems if "contract mismatch" in m and "total_pages" in m)
    assert "returns no 'total_pages'" in mismatch and "'total_lines'" in mismatch
    assert problems[mismatch].line == line_of(text, "read_text:", "tools:")
    assert find("tool 'split_clauses' is nondeterministic, which a pipeline refuses") == line_of(
        text, "tool: split_clauses"
    )


def test_a_renamed_output_field_is_refused_at_registration_with_both_names() -> None:
    expected_in = {"type": "object", "properties": {"path": {"type": "string"}}}
    expected_out = {
        "type": "object",
        "properties": {"total_pages": {"type": "integer"}},
        "required": ["total_pages"],
    }
    old_parser = ToolImpl(
        "pdf_parser",
        lambda a: {"page_count": 1},
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        {"type": "object", "properties": {"page_count": {"type": "integer"}}},
    )
    problems = check_registration(
        "pdf_parser", expected_in, expected_out, "deterministic", old_parser
    )
    assert len(problems) == 1
    assert "returns no 'total_pages'" in problems[0] and "'page_count'" in problems[0]
    fitting = ToolImpl(
        "pdf_parser",
        lambda a: {"total_pages": 1},
        old_parser.input_schema,
        {
            "type": "object",
            "properties": {"total_pages": {"type": "integer"}},
            "required": ["total_pages"],
        },
    )
    assert (
        check_registration("pdf_parser", expected_in, expected_out, "deterministic", fitting) == []
    )
    stricter = check_registration(
        "pdf_parser",
        expected_in,
        expected_out,
        "deterministic",
        ToolImpl(**{**fitting.__dict__, "determinism": "seeded"}),
    )
    assert stricter == ["tool 'pdf_parser' is seeded but the role's contract says deterministic"]


def test_a_seeded_step_needs_a_fixed_seed(broken: Path) -> None:
    broken.write_text(BROKEN.replace("determinism: nondeterministic", "determinism: seeded"))
    messages = [p.message for p in validate(load_role(broken))]
    assert any("is seeded; give the step a fixed `seed:`" in m for m in messages)
    broken.write_text(
        BROKEN.replace("determinism: nondeterministic", "determinism: seeded").replace(
            "input: {text: $request.text}", "input: {text: $request.text}\n        seed: 7"
        )
    )
    assert not any("seed" in p.message for p in validate(load_role(broken)))


def test_the_cli_prints_each_problem_and_exits_1(broken: Path, lar_home: Path) -> None:
    done = lar("role", "validate", str(broken), home=lar_home)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert all(line.startswith(f"{broken.resolve()}:") for line in lines), lines
    assert any("is unreachable" in line for line in lines)
    assert any("contract mismatch" in line for line in lines)
    ok = lar("role", "validate", str(CONTRACT_ROLE), str(LOG_ROLE), home=lar_home)
    assert ok.returncode == 0, ok.stderr
    assert "contract-prescreen 1.0.0, 8 states, 8 tools from 2 capabilities, 3 intents" in ok.stdout


def test_shape_errors_name_the_key_and_line(tmp_path: Path) -> None:
    file = tmp_path / "agent.yaml"
    file.write_text(BROKEN.replace("    run: split\n", "    run: split\n    colour: red\n"))
    with pytest.raises(RoleFileError) as err:
        load_role(file)
    problem = err.value.problems[0]
    assert problem.line == line_of(file.read_text(), "colour: red")
    assert "unknown key 'colour'" in problem.message and "allowed keys:" in problem.message
    file.write_text("name: [unclosed\n")
    with pytest.raises(RoleFileError) as err:
        load_role(file)
    assert "not valid YAML" in str(err.value)


def test_a_guard_that_is_not_a_plain_expression_is_refused(broken: Path) -> None:
    broken.write_text(BROKEN.replace("document.page_total > 0", "__import__('os').system('x')"))
    messages = [p.message for p in validate(load_role(broken))]
    assert any("Call is not allowed" in m for m in messages), messages


def test_a_step_name_used_in_two_pipelines_is_refused(broken: Path) -> None:
    broken.write_text(BROKEN.replace("      - name: parsing\n", "      - name: document\n"))
    problems = [p for p in validate(load_role(broken)) if "used twice" in p.message]
    assert len(problems) == 1
    assert "step name 'document' is used twice (pipelines intake and split)" in problems[0].message
    assert problems[0].line == line_of(broken.read_text(), "name: document", "split:")
