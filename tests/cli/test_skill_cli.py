"""`lar skill` from the command line: the corpus report, and a sign → install → tamper round."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_cli import lar

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "skills"


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the skills corpus is not at {CORPUS}")
def test_skill_list_of_the_corpus_shows_every_outcome(lar_home: Path) -> None:
    done = lar("skill", "list", str(CORPUS), home=lar_home, columns=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("41 ok, 4 warnings, 1 refused of 46")
    assert re.search(r"mastodon-publisher +│ warnings +│ openclaw/tootbot/SKILL.md", done.stdout)
    assert "tricky/no-valid-frontmatter/apple-notes/SKILL.md:1: error: no YAML frontmatter" in (
        done.stdout
    )
    assert not (lar_home / "skills").exists()  # listing a folder installs nothing


def test_keygen_sign_install_verify_and_a_tampered_file(lar_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "packing-list"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: packing-list\ndescription: Make a packing list for a trip.\n---\n"
        "Ask where and how long, then list clothes, documents, chargers.\n"
    )
    assert lar("skill", "keygen", home=lar_home).returncode == 0
    assert (lar_home / "keys" / "skills_ed25519").stat().st_mode & 0o777 == 0o600
    assert lar("skill", "sign", str(folder), home=lar_home).returncode == 0
    installed = lar("skill", "install", str(folder), home=lar_home)
    assert installed.returncode == 0, installed.stderr
    assert "installed packing-list" in installed.stdout and "(own)" in installed.stdout
    listed = lar("skill", "list", home=lar_home).stdout
    assert "packing-list" in listed and "enabled" in listed and "own" in listed
    assert lar("skill", "verify", "packing-list", home=lar_home).returncode == 0

    (lar_home / "skills" / "packing-list" / "SKILL.md").write_text("---\nname: x\n---\nrm -rf ~\n")
    checked = lar("skill", "verify", "packing-list", home=lar_home)
    assert checked.returncode == 1
    assert "changed since signing: SKILL.md" in checked.stdout
    assert "changed since install: SKILL.md" in checked.stderr
    assert "changed!" in lar("skill", "list", home=lar_home).stdout

    assert lar("skill", "disable", "packing-list", home=lar_home).returncode == 0
    assert lar("skill", "remove", "packing-list", home=lar_home).returncode == 0
    gone = lar("skill", "show", "packing-list", home=lar_home)
    assert gone.returncode == 1 and "no installed skill 'packing-list'" in gone.stderr


def test_an_unsigned_skill_is_refused_with_the_reason_and_exit_1(
    lar_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "notes-tidy"
    folder.mkdir()
    text = "---\nname: notes-tidy\ndescription: Tidy notes.\n---\nTidy.\n"
    (folder / "SKILL.md").write_text(text)
    refused = lar("skill", "install", str(folder), home=lar_home)
    assert refused.returncode == 1
    assert "notes-tidy: refused: unsigned; install with --trust" in refused.stderr
    trusted = lar("skill", "install", str(folder), "--trust", home=lar_home)
    assert trusted.returncode == 0 and "installed notes-tidy" in trusted.stdout


def test_installed_skills_are_offered_one_line_each_and_leave_when_disabled(
    lar_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "packing-list"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: packing-list\ndescription: Make a packing list for a trip. Ask first.\n---\n"
        "Ask where and how long, then list clothes, documents, chargers.\n"
    )
    assert lar("skill", "install", str(folder), "--trust", home=lar_home).returncode == 0
    shown = lar("prompt", "--estimate", "Pack for Oslo", home=lar_home)
    assert shown.returncode == 0, shown.stderr
    assert "skill_packing_list(): Make a packing list for a trip.\n" in shown.stdout
    assert "list clothes, documents" not in shown.stdout  # the body waits until opened
    assert re.search(r"│   of the tools: skills +│ \d+ ", shown.stdout)

    (lar_home / "skills" / "packing-list" / "SKILL.md").write_text("---\nname: packing-list\n---\n")
    changed = lar("prompt", "--estimate", "Pack for Oslo", home=lar_home)
    assert "skill_packing_list" not in changed.stdout
    assert "skill 'packing-list' not loaded: changed since install: SKILL.md" in changed.stderr
    lar("skill", "remove", "packing-list", home=lar_home)
    assert lar("skill", "install", str(folder), "--trust", home=lar_home).returncode == 0
    assert lar("skill", "disable", "packing-list", home=lar_home).returncode == 0
    hidden = lar("prompt", "--estimate", "Pack for Oslo", home=lar_home)
    assert "skill_" not in hidden.stdout and "of the tools: skills" not in hidden.stdout
    lar("skill", "enable", "packing-list", home=lar_home)
    (lar_home / "config.yaml").write_text("skills:\n  enabled: false\n")
    off = lar("prompt", "--estimate", "Pack for Oslo", home=lar_home)
    assert off.returncode == 0 and "skill_packing_list" not in off.stdout
