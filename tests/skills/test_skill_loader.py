"""SKILL.md as the world writes it: the 46 real skills of ../shared/corpora/skills/ and the shapes
that break a strict reader."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from lar.skills import Skill, SkillError, load_skill, scan_folder

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "skills"
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the skills corpus is not beside the checkout ({CORPUS})"
)


@needs_corpus
def test_every_corpus_skill_loads_or_is_reported_with_file_and_reason() -> None:
    results = scan_folder(CORPUS)
    assert len(results) == 46
    assert Counter(r.outcome for r in results) == {"ok": 41, "warnings": 4, "refused": 1}
    reported = {
        (r.file.relative_to(CORPUS).as_posix(), p.line, p.severity, p.message.split(" (")[0])
        for r in results
        for p in r.problems
    }
    assert {(f, line, sev) for f, line, sev, _ in reported} == {
        ("anthropic/claude-api/SKILL.md", 3, "warning"),
        ("openclaw/idea/SKILL.md", 3, "warning"),
        ("openclaw/idea/SKILL.md", 2, "warning"),
        ("openclaw/local-tts-stt/SKILL.md", 7, "warning"),
        ("openclaw/tootbot/SKILL.md", 2, "warning"),
        ("tricky/no-valid-frontmatter/apple-notes/SKILL.md", 1, "error"),
    }
    by_name = {r.skill.name: r.skill for r in results if r.skill}
    # strict YAML fails on an unquoted ": " in the description; read key by key, all of it is kept
    idea = by_name["idea-exploration"]
    assert idea.description.startswith("Launch background Claude sessions")
    assert idea.description.endswith('Say "Idea: [description]" to trigger.')
    assert idea.frontmatter["metadata"]["clawdbot"]["requires"]["bins"] == [
        "claude",
        "tmux",
        "telegram",
    ]
    # unknown keys and nested vendor metadata survive as they were written
    assert by_name["mastodon-publisher"].folder.name == "tootbot"
    assert "triggers" in by_name["mastodon-publisher"].frontmatter
    assert by_name["whisper"].description.startswith("Local speech-to-text")  # folded scalar
    assert len(by_name["claude-api"].description) == 1068
    assert all(s.description and s.body for s in by_name.values())


@needs_corpus
def test_references_are_listed_not_loaded() -> None:
    skill = load_skill(CORPUS / "hermes" / "software-development" / "github")
    assert skill.resources()["references"] == [
        "references/auth.md",
        "references/ci-troubleshooting.md",
    ]
    reference = (skill.folder / "references" / "ci-troubleshooting.md").read_text()
    assert reference.strip().splitlines()[-1] not in skill.body  # loaded only when asked for


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text)
    return folder


def test_a_file_without_frontmatter_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    folder = write(tmp_path / "plain", "\n# Just notes\n\nNo frontmatter here.\n")
    with pytest.raises(SkillError) as err:
        load_skill(folder)
    assert f"{folder / 'SKILL.md'}:2: error: no YAML frontmatter" in str(err.value)


def test_an_unclosed_frontmatter_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path / "open", "---\nname: open\ndescription: never closed\n")
    with pytest.raises(SkillError, match=r"SKILL.md:1: error: the frontmatter opened here"):
        load_skill(folder)


def test_missing_name_and_description_come_from_the_folder_and_body(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "tidy-up", "---\nlicense: MIT\n---\n# Tidy\n\nSort the downloads folder.\n"
    )
    skill = load_skill(folder)
    assert (skill.name, skill.description) == ("tidy-up", "Sort the downloads folder.")
    assert [p.message for p in skill.problems] == [
        "no name; using the folder's, 'tidy-up'",
        "no description; using the body's first paragraph",
    ]


def test_a_frontmatter_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path / "list", "---\n- a\n- b\n---\nbody\n")
    with pytest.raises(SkillError, match=r"SKILL.md:2: error: frontmatter is a list"):
        load_skill(folder)


def test_a_bad_step_is_reported_at_load_and_its_steps_ignored(tmp_path: Path) -> None:
    text = (
        "---\nname: half\ndescription: Two steps.\nmetadata:\n  lar:\n    steps:\n"
        "      - tool: calculate\n        arguments: {expression: '{{ a'}\n"
        "---\nDo it.\n"
    )
    skill = load_skill(write(tmp_path / "half", text))
    assert skill.steps == []
    assert "metadata.lar.steps[1]: template '{{ a'" in skill.problems[0].message
    assert skill.problems[0].line == 4


def test_the_prompt_line_is_the_first_sentence_and_short(tmp_path: Path) -> None:
    long = "Search papers on arXiv by topic. " + "Use it for anything about papers. " * 40
    skill = Skill("arxiv", long, tmp_path, "body", {})
    assert skill.short() == "Search papers on arXiv by topic."
    skill.description = "word " * 60
    assert len(skill.short()) <= 90 and skill.short().endswith("…")
