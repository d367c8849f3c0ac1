"""`lar role diff` before an upgrade, and the intent parser's behaviour."""

from __future__ import annotations

from pathlib import Path

from roles_helpers import CONTRACT_ROLE, lar

from lar.roles import IntentParser, diff_roles, load_role, load_synonyms


def test_diff_shows_a_removed_state_and_a_changed_contract(lar_home: Path, tmp_path: Path) -> None:
    text = CONTRACT_ROLE.read_text()
    new = (
        text.replace("version: 1.0.0", "version: 1.1.0")
        .replace("      total_lines: integer\n", "      page_count: integer\n")
        .replace("  LISTING_RULES:\n    run: rules\n    next:\n      - to: RULES_LISTED\n", "")
        .replace("  RULES_LISTED:\n    final: true\n", "")
        .replace("    state: LISTING_RULES", "    state: GENERATING_REPORT")
        .replace("memory_retention_days: 90", "memory_retention_days: 30")
    )
    upgraded = tmp_path / "agent.yaml"
    upgraded.write_text(new)
    (tmp_path / "clauses.yaml").write_text((CONTRACT_ROLE.parent / "clauses.yaml").read_text())
    (tmp_path / "synonyms.csv").write_text((CONTRACT_ROLE.parent / "synonyms.csv").read_text())
    lines = diff_roles(load_role(CONTRACT_ROLE), load_role(upgraded))
    assert "~ version: 1.0.0 -> 1.1.0" in lines
    assert "- state LISTING_RULES" in lines and "- state RULES_LISTED" in lines
    assert "- transition LISTING_RULES -> RULES_LISTED" in lines
    assert "~ contract read_text: output field total_lines removed (integer)" in lines
    assert "~ contract read_text: output field page_count added (integer)" in lines
    assert "~ intent list_rules: enters LISTING_RULES -> GENERATING_REPORT" in lines
    assert "~ memory retention (days): 90 -> 30" in lines
    done = lar("role", "diff", str(CONTRACT_ROLE), str(upgraded), home=lar_home)
    assert done.returncode == 0 and "- state LISTING_RULES" in done.stdout
    assert "output field total_lines removed" in done.stdout
    assert lar("role", "diff", str(CONTRACT_ROLE), str(CONTRACT_ROLE), home=lar_home).stdout == (
        "no changes\n"
    )


def test_apply_installs_then_shows_the_diff_and_needs_consent(
    lar_home: Path, tmp_path: Path
) -> None:
    done = lar("role", "apply", str(CONTRACT_ROLE), home=lar_home)
    assert done.returncode == 0, done.stderr
    assert (lar_home / "roles" / "contract-prescreen" / "clauses.yaml").exists()
    assert "contract-prescreen 1.0.0" in lar("role", "list", home=lar_home).stdout
    for name in ("agent.yaml", "clauses.yaml", "synonyms.csv"):
        (tmp_path / name).write_text((CONTRACT_ROLE.parent / name).read_text())
    (tmp_path / "agent.yaml").write_text(
        (tmp_path / "agent.yaml").read_text().replace("version: 1.0.0", "version: 1.0.1")
    )
    refused = lar("role", "apply", str(tmp_path / "agent.yaml"), home=lar_home)
    assert refused.returncode == 1 and "~ version: 1.0.0 -> 1.0.1" in refused.stdout
    assert "needs a terminal or --yes" in refused.stderr
    applied = lar("role", "apply", str(tmp_path / "agent.yaml"), "--yes", home=lar_home)
    assert applied.returncode == 0 and "installed contract-prescreen 1.0.1" in applied.stdout
    shown = lar("role", "show", "contract-prescreen", home=lar_home)
    assert "contract-prescreen 1.0.1" in shown.stdout and "→ PARSING" in shown.stdout


def parser() -> IntentParser:
    return IntentParser(
        {
            "book": ("BOOKING", ["book", "reserve", "room"], ["book a room", "reserve a room"]),
            "cancel": ("CANCELLING", ["cancel", "booking"], ["cancel my booking"]),
            "hours": ("HOURS", ["opening hours", "open"], ["when are you open"]),
        },
        load_synonyms({"book": ["reservar", "buchen"], "cancel": ["cancelar"]}, Path(".")),
        threshold=0.6,
    )


def test_typos_synonyms_and_word_order_reach_the_intent() -> None:
    p = parser()
    assert p.parse("Book a room for two").intent == "book"
    assert p.parse("a room, reserve it please").intent == "book"
    assert p.parse("resrve a rooom").intent == "book"
    assert p.parse("Quero reservar uma sala (room)").intent == "book"
    assert p.parse("cancelar booking").intent == "cancel"
    assert p.parse("ÉTÉ: when are you OPEN?").intent == "hours"


def test_out_of_scope_gets_three_choices_and_no_state() -> None:
    m = parser().parse("what is the weather like")
    assert m.intent is None and m.state is None
    assert len(m.choices) == 3 and all(0 <= c <= m.confidence for _, c in m.choices[1:])


def test_a_request_between_two_intents_is_not_guessed() -> None:
    m = parser().parse("book or cancel")
    assert m.intent is None and {c for c, _ in m.choices[:2]} == {"book", "cancel"}
