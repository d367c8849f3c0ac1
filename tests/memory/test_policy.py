"""The write policy's rules: which sentences are statements, what is volatile, what is supported."""

from __future__ import annotations

import pytest

from lar.memory.policy import Statement, supported, user_statements, volatile


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I prefer green tea over coffee.",
            [Statement("preference", "I prefer green tea over coffee.")],
        ),
        ("I'm allergic to peanuts", [Statement("fact", "I'm allergic to peanuts.")]),
        (
            "My sister Ana lives in Braga. Can you book a table for two?",
            [Statement("fact", "My sister Ana lives in Braga.")],
        ),
        (
            "Please remember that my badge number is 4471.",
            [Statement("fact", "My badge number is 4471.")],
        ),
        ("I really dislike mushrooms!", [Statement("preference", "I really dislike mushrooms!")]),
        ("Btw, my editor is Neovim", [Statement("fact", "Btw, my editor is Neovim.")]),
        ("What is my sister's name?", []),
        ("Can you tell me where I live?", []),
        ("I want you to write a poem.", []),
        ("Please summarise this file.", []),
        ("What is 2 + 2", []),
        ("hi", []),
        ("My build started at 2026-11-29 14:02 and failed.", []),  # volatile
    ],
)
def test_statements(text: str, expected: list[Statement]) -> None:
    assert user_statements(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("The server started at 2026-11-29T10:00:03", "a timestamp"),
        ("The worker runs as pid 48213", "a process id"),
        ("The report is in /tmp/tmpa8f3/report.csv", "a temporary path"),
        ("It listens on port 43121", "a port number"),
        ("Maya likes tea", None),
    ],
)
def test_volatile(text: str, why: str | None) -> None:
    assert volatile(text) == why


def test_supported_needs_the_words_and_every_number() -> None:
    evidence = ['file_read: version = "0.1.0" in pyproject.toml', "What version is it?"]
    assert supported("The project version is 0.1.0 (pyproject.toml)", evidence)
    assert not supported("The project version is 0.2.0 (pyproject.toml)", evidence)
    assert not supported("The deploy key rotates every 90 days", evidence)
