"""Running the example roles: same inputs, same result and same evidence hashes; the evidence
chain printed and an edited row detected; retention; inputs and unclear requests."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from roles_helpers import CONTRACT_ROLE, CONTRACTS, LOG_ROLE, LOGS, lar

from lar.roles import RoleRunner, load_role
from lar.traces import EvidenceStore


def runner(role_file: Path, home: Path) -> RoleRunner:
    return RoleRunner(load_role(role_file), home=home, db_path=home / "lar.db")


def hashes(home: Path, run_id: str) -> list[tuple[str, str, str, str]]:
    return [
        (r.step, r.component, r.input_hash, r.output_hash)
        for r in EvidenceStore(home / "lar.db").chain(run_id)
    ]


@pytest.mark.parametrize(
    ("role_file", "request_text", "inputs", "path"),
    [
        (
            CONTRACT_ROLE,
            "screen this contract",
            {"document": str(CONTRACTS / "services-bravo.txt")},
            ["RECEIVING_DOC", "PARSING", "GENERATING_REPORT"],
        ),
        (
            LOG_ROLE,
            "triage this log",
            {"log": str(LOGS / "cabinet-a.log")},
            ["RECEIVING_LOG", "TRIAGING", "TICKETING", "REPORTED"],
        ),
    ],
)
def test_two_runs_on_the_same_inputs_give_identical_results_and_evidence_hashes(
    lar_home: Path, role_file: Path, request_text: str, inputs: dict[str, str], path: list[str]
) -> None:
    r = runner(role_file, lar_home)
    first = r.run(request_text, inputs)
    second = runner(role_file, lar_home).run(request_text, inputs)
    assert first.outcome == second.outcome == "completed"
    assert first.path == second.path == path
    assert first.run_id != second.run_id
    assert first.result == second.result
    assert first.result_hash == second.result_hash
    assert hashes(lar_home, first.run_id) == hashes(lar_home, second.run_id)
    assert len(hashes(lar_home, first.run_id)) == 2 + sum(1 for s in first.steps)


def test_the_example_results_are_what_the_tables_say(lar_home: Path) -> None:
    r = runner(CONTRACT_ROLE, lar_home)
    bravo = r.run(
        "screen", {"document": str(CONTRACTS / "services-bravo.txt")}, intent="screen_contract"
    )
    fields = bravo.result["fields"]
    assert fields["risk.level"] == "high"
    assert (fields["risk.missing_required"], fields["risk.red_flags"]) == (4, 2)
    # a clause that says confidentiality does not apply is not counted as present
    cedar = r.run(
        "screen", {"document": str(CONTRACTS / "supply-cedar.txt")}, intent="screen_contract"
    )
    assert "Confidentiality: negated (high)" in cedar.result["fields"]["risk.reasons"]
    assert cedar.result["fields"]["risk.level"] == "medium"
    acme = r.run("screen", {"document": str(CONTRACTS / "nda-acme.txt")}, intent="screen_contract")
    assert acme.result["fields"]["risk.level"] == "low"
    logs = runner(LOG_ROLE, lar_home)
    quiet = logs.run("triage this log", {"log": str(LOGS / "cabinet-b.log")})
    assert quiet.path == ["RECEIVING_LOG", "TRIAGING", "REPORTED"]  # nothing worth a ticket
    noisy = logs.run("triage this log", {"log": str(LOGS / "cabinet-a.log")})
    tickets = (lar_home / "roles" / "log-triage" / "tickets.jsonl").read_text().splitlines()
    assert [json.loads(t)["id"] for t in tickets] == [noisy.result["fields"]["ticket.ticket_id"]]
    again = logs.run("triage this log", {"log": str(LOGS / "cabinet-a.log")})
    assert again.result == noisy.result  # the same incident never opens a second ticket
    assert len((lar_home / "roles" / "log-triage" / "tickets.jsonl").read_text().splitlines()) == 1


def test_lar_evidence_prints_the_chain_and_finds_an_edited_row(lar_home: Path) -> None:
    done = lar(
        "role",
        "run",
        str(LOG_ROLE),
        "triage this log",
        "--input",
        f"log={LOGS / 'cabinet-a.log'}",
        "--json",
        home=lar_home,
    )
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    shown = lar("evidence", run_id[:8], home=lar_home)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    for piece in (
        "logs/parse_syslog@1.0.0",
        "logs/open_ticket@1.0.0",
        "lar.roles.intent",
        "verified: tool's output schema, role's contract",
        "chain intact (7 steps",
    ):
        assert piece in out
    first_output = EvidenceStore(lar_home / "lar.db").chain(run_id)[2].output_hash
    assert first_output in out
    with sqlite3.connect(lar_home / "lar.db") as db:
        db.execute(
            "UPDATE evidence SET output_hash = ? WHERE run_id = ? AND seq = 3",
            ("sha256:" + "0" * 64, run_id),
        )
    tampered = lar("evidence", run_id, home=lar_home)
    assert tampered.returncode == 1
    assert "TAMPERED step 3 (parsing): changed after it was recorded" in tampered.stdout
    with sqlite3.connect(lar_home / "lar.db") as db:
        db.execute("DELETE FROM evidence WHERE run_id = ? AND seq = 5", (run_id,))
    assert "step 5: missing" in lar("evidence", run_id, home=lar_home).stdout
    unknown = lar("evidence", "nope", home=lar_home)
    assert unknown.returncode == 1 and "no evidence for run 'nope'" in unknown.stderr


def test_runs_older_than_the_retention_are_deleted_with_their_evidence(lar_home: Path) -> None:
    r = runner(LOG_ROLE, lar_home)
    old = r.run("triage this log", {"log": str(LOGS / "cabinet-b.log")})
    with sqlite3.connect(lar_home / "lar.db") as db:
        db.execute(
            "UPDATE role_runs SET started = started - 31 * 86400 WHERE run_id = ?", (old.run_id,)
        )
    new = r.run("triage this log", {"log": str(LOGS / "cabinet-b.log")})
    assert [x.run_id for x in r.store.runs("log-triage")] == [new.run_id]
    with sqlite3.connect(lar_home / "lar.db") as db:
        left = db.execute("SELECT count(*) FROM evidence WHERE run_id = ?", (old.run_id,))
        assert left.fetchone()[0] == 0


def test_unclear_requests_get_choices_and_enter_no_state(lar_home: Path) -> None:
    done = lar(
        "role", "run", str(CONTRACT_ROLE), "what is the weather in Lisbon", "--plain", home=lar_home
    )
    assert done.returncode == 3
    assert "Not sure what you want. Did you mean:" in done.stdout
    assert "screen_contract: screen a contract" in done.stdout
    assert "compare_versions: compare two versions" in done.stdout  # all three, best first
    r = runner(CONTRACT_ROLE, lar_home)
    run = r.run("what is the weather in Lisbon")
    assert run.outcome == "unclear" and run.path == [] and run.steps == []


def test_a_missing_file_is_a_routed_outcome_and_a_missing_input_stops(lar_home: Path) -> None:
    r = runner(CONTRACT_ROLE, lar_home)
    missing = r.run("screen this contract", {"document": "/nonexistent/x.txt"})
    assert missing.path == ["RECEIVING_DOC", "REJECTED"]
    assert "No such file or directory" in missing.result["fields"]["document.error"]
    stopped = r.run("screen this contract")
    assert stopped.outcome == "stopped"
    assert "input $request.document is missing" in stopped.notes[0]
    bad = lar(
        "role", "run", str(CONTRACT_ROLE), "screen", "-i", "colour=red", "--plain", home=lar_home
    )
    assert (
        bad.returncode == 1 and "unknown input(s) colour; this role takes: document" in bad.stderr
    )


def test_bad_input_files_and_a_broken_table_are_rejected_with_the_reason(
    lar_home: Path, tmp_path: Path
) -> None:
    binary = tmp_path / "scan.pdf"
    binary.write_bytes(b"%PDF-1.7\n\xff\xfe\x00binary")
    r = runner(CONTRACT_ROLE, lar_home)
    run = r.run("screen this contract", {"document": str(binary)})
    assert run.path == ["RECEIVING_DOC", "REJECTED"]
    assert "not UTF-8 text" in run.result["fields"]["document.error"]
    # the office's table with a broken pattern: the file and the rule are named
    role_dir = tmp_path / "role"
    role_dir.mkdir()
    for name in ("agent.yaml", "synonyms.csv"):
        (role_dir / name).write_text((CONTRACT_ROLE.parent / name).read_text())
    table = (CONTRACT_ROLE.parent / "clauses.yaml").read_text()
    (role_dir / "clauses.yaml").write_text(table.replace("'\\bgoverned by\\b'", "'(unclosed'"))
    broken = runner(role_dir / "agent.yaml", lar_home)
    run = broken.run("screen this contract", {"document": str(CONTRACTS / "nda-acme.txt")})
    # the risk score cannot be computed without the table: its rule stops the run, no level
    assert run.outcome == "stopped" and run.path == ["RECEIVING_DOC", "PARSING"]
    assert "risk.level" not in run.result["fields"]
    error = run.result["fields"]["matching.error"]
    assert "clauses.yaml: governing_law: bad pattern '(unclosed'" in error


def test_two_versions_of_a_contract_are_compared_clause_by_clause(lar_home: Path) -> None:
    r = runner(CONTRACT_ROLE, lar_home)
    run = r.run(
        "what changed between the two versions",
        {
            "document": str(CONTRACTS / "nda-acme-v2.txt"),
            "previous": str(CONTRACTS / "nda-acme.txt"),
        },
    )
    assert run.path == ["COMPARING", "VERSIONS_COMPARED"]
    fields = run.result["fields"]
    assert fields["changes.added"] == [{"number": "5", "title": "Non-Solicitation"}]
    assert fields["changes.removed"] == [{"number": "3", "title": "Term"}]
    assert [c["title"] for c in fields["changes.changed"]] == ["Limitation of Liability"]
    assert fields["changes.unchanged_count"] == 4  # renumbered but the same text: unchanged
    missing = r.run("compare the two versions", {"document": str(CONTRACTS / "nda-acme-v2.txt")})
    assert missing.outcome == "stopped" and "$request.previous is missing" in missing.notes[0]
