"""The write policy (M4): "No Execution, No Memory".

A memory may come from two places only: an explicit statement of the user's, or a fact the model
states that a *successful* tool result of the same run supports. Before it is stored it must be
atomic (one sentence), free of volatile values (timestamps, PIDs, temporary paths), and new: a
near-duplicate of a current memory is merged into it, and a statement about the same thing that
differs replaces the older one as a new version (never a silent overwrite).

Statements are found by rules, not by a model, so that they cost nothing and never invent: a
sentence that is not a question or a request and speaks about the user ("I prefer…", "My sister
is…", "Remember that…"). English only for now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Statement",
    "user_statements",
    "statement",
    "volatile",
    "directive",
    "OUTSIDE_SOURCES",
    "supported",
    "split_sentences",
    "content_words",
    "STOPWORDS",
]

_SENTENCE = re.compile(r"(?<=[.!;])\s+|\n+")
_OPENER = r"(?:(?:by the way|btw|also|oh|and|well|fyi|just so you know|actually|ok|okay)[,:]?\s+)?"
_ABOUT_ME = re.compile(
    _OPENER + r"(?:(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[,:]?\s+"
    r"|for the record[,:]?\s+)?"
    r"(?:i(?:'m|'ve|'d| am| have| had| was| do| don't| do not| never| always| usually| often"
    r"| really| mostly| only| still| no longer| just)?\s+"
    r"(?:prefer|like|love|enjoy|hate|dislike|can't stand|avoid|want|need|use|work|live|drink"
    r"|eat|am|have|speak|study|play|own|drive|go|run|read|write|cook|allergic|vegetarian|vegan"
    r"|born|married|moved|started|switched|favou?r)"
    r"|i'm\s|i am\s|my\s|mine\s|we\s(?:live|have|are|own)|call me\s)",
    re.I,
)
_EXPLICIT = re.compile(_OPENER + r"(?:please\s+)?(?:remember|note|keep in mind)\b", re.I)
_REQUEST = re.compile(
    r"^(?:i (?:want|need|would like|'d like) (?:you|to know|help)|can you|could you|would you"
    r"|please (?!remember|note|keep in mind)|tell me|show me|help me|let's|how |what |why |when "
    r"|where |who |which )",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(prefer|like|love|enjoy|hate|dislike|can't stand|don't like|do not like|avoid"
    r"|favou?rite|rather|fan of)\b",
    re.I,
)
_VOLATILE = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}", re.I), "a timestamp"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b"), "a time of day to the second"),
    (re.compile(r"\bpid\s*[:=#]?\s*\d+", re.I), "a process id"),
    (re.compile(r"(?<![\w/])(?:/tmp|/var/tmp|/var/folders|/private/tmp)/\S*"), "a temporary path"),
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "a UUID",
    ),
    (re.compile(r"\bport\s+\d{4,5}\b", re.I), "a port number"),
]
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does doing for from had has have how i
    i'd i'm i've if in into is it it's its me my myself no not of on or our so than that the their
    them then there these they this to was we were what when where which while who whom why will
    with would you your yours about again all am any because before being both each few further
    here just more most other own same should some such too very up down out off over under once
    only tell remind know remember said say mentioned mention also really btw""".split()
)
"""Words that say nothing about what a memory is about (recall terms, evidence, index lines)."""
_WORD = re.compile(r"[\w'-]+", re.UNICODE)


@dataclass(slots=True, frozen=True)
class Statement:
    type: Literal["preference", "fact"]
    content: str


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def content_words(text: str) -> set[str]:
    return {w.lower().strip("'-") for w in _WORD.findall(text)} - STOPWORDS - {""}


def volatile(text: str) -> str | None:
    """What volatile value the text holds (a reason), or None."""
    for pattern, what in _VOLATILE:
        if pattern.search(text):
            return what
    return None


OUTSIDE_SOURCES = ("mcp",)
"""Where a memory may come from that is neither the user nor this agent's own run (an MCP
client): stored as data, never as an instruction, and shown as such (AgentMemory.line)."""

_DIRECTIVE = [
    re.compile(
        r"\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|rules?|prompts?"
        r"|polic(?:y|ies)|guidelines?)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:allow|approve|permit|auto-?approve|trust)\b.{0,30}\b(?:all|every|any)\b"
        r".{0,30}\b(?:commands?|calls?|tools?|requests?|actions?|shell)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:without|no|never)\s+(?:asking|confirm(?:ing|ation)?|approval|permission)\b",
        re.I,
    ),
    re.compile(
        r"\b(?:you|the (?:agent|assistant|model))\s+(?:must|should|shall|are allowed to"
        r"|may now|have permission|are permitted|need to)\b",
        re.I,
    ),
    re.compile(
        r"^\s*(?:always|never|do not|don't)\s+(?:run|execute|ask|call|use|tell|allow)\b", re.I
    ),
    re.compile(r"\b(?:system prompt|developer message|new instructions?)\b", re.I),
]


def directive(text: str) -> str | None:
    """Why ``text`` reads as an instruction to the agent (override its rules, allow calls,
    skip asking) rather than a fact about the user, or None."""
    for pattern in _DIRECTIVE:
        if found := pattern.search(text):
            return f"an instruction to the agent ({found.group(0).strip()!r}), not a fact"
    return None


def user_statements(text: str) -> list[Statement]:
    """The sentences of a user message that state something about the user, one per memory."""
    found: list[Statement] = []
    for sentence in split_sentences(text):
        s = sentence.strip(" \"'")
        if s.endswith("?") or len(s.split()) < 3 or len(s) > 300:
            continue
        if _REQUEST.match(s) and not _EXPLICIT.match(s):
            continue
        if not _ABOUT_ME.match(s):
            continue
        if volatile(s):
            continue
        found.append(statement(s))
    return found


def statement(text: str) -> Statement:
    """What a sentence the user states becomes as a memory: its framing taken off ("Remember
    that my badge number is 4471." → the fact itself), ended with a full stop, and typed: a
    preference when it says what the user likes or avoids, else a fact."""
    s = text.strip(" \"'")
    if _EXPLICIT.match(s):
        s = re.sub(
            "^" + _OPENER + r"(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[,:]?\s+",
            "",
            s,
            flags=re.I,
        )
        s = s[:1].upper() + s[1:]
    if not s.endswith((".", "!")):
        s += "."
    kind: Literal["preference", "fact"] = "preference" if _PREFERENCE.search(s) else "fact"
    return Statement(kind, s)


def supported(fact: str, evidence: list[str], share: float = 0.6) -> bool:
    """Whether most of the fact's content words (and all its numbers) occur in the evidence."""
    words = content_words(fact)
    if not words:
        return False
    seen: set[str] = set()
    for text in evidence:
        seen |= content_words(text)
    numbers = {w for w in words if any(c.isdigit() for c in w)}
    if not numbers <= seen:
        return False
    return len(words & seen) / len(words) >= share
