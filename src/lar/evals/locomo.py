"""LoCoMo conversations as a recall benchmark: store every turn with its date and speaker, ask
each question as of the conversation's end, count the evidence turns found in the top k.

The file is ``locomo10.json``'s layout (a list of samples, each with ``conversation`` holding
``speaker_a``, ``speaker_b``, ``session_N`` turn lists and ``session_N_date_time`` strings such
as ``"1:56 pm on 8 May, 2023"``, and ``qa`` with ``question``, ``evidence`` and ``category``).
A turn becomes the memory ``"Speaker: text"`` — with ``[shares a photo: caption]`` when the turn
shared an image — dated at its session (plus one second per turn, to keep their order).
Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (its questions
have no answer in the conversation and are not scored).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from lar.errors import LarError

__all__ = [
    "CATEGORIES",
    "Conversation",
    "LocomoQuestion",
    "Turn",
    "load_locomo",
    "parse_session_time",
    "evaluate",
]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class LocomoError(LarError):
    pass


@dataclass(slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    at: float
    session: int
    reply_to: str = ""
    """The turn this one answers (the one before it in the same session), as stored."""

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(slots=True)
class LocomoQuestion:
    q: str
    evidence: list[str]
    category: int


@dataclass(slots=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[LocomoQuestion]
    end: float
    ids: dict[str, str] = field(default_factory=dict)
    """dia_id → memory id, once stored."""


_SESSION_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I
)


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → a local datetime."""
    m = _SESSION_TIME.match(text)
    if m is None:
        raise ValueError(f"not a session time: {text!r}")
    hour = int(m[1]) % 12 + (12 if m[3].lower() == "pm" else 0)
    day = datetime.strptime(f"{m[4]} {m[5][:3]} {m[6]}", "%d %b %Y")
    return day.replace(hour=hour, minute=int(m[2]))


def _evidence(raw: list[object]) -> list[str]:
    """Evidence ids, mending the set's few malformed ones ("D8:6; D9:17", "D:11:26")."""
    found: list[str] = []
    for item in raw:
        for part in str(item).split(";"):
            m = re.fullmatch(r"\s*D:?(\d+):(\d+)\s*", part)
            if m:
                found.append(f"D{m[1]}:{m[2]}")
    return found


def load_locomo(path: Path) -> list[Conversation]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise LocomoError(f"{path}: {exc}") from None
    conversations: list[Conversation] = []
    for n, sample in enumerate(data):
        where = f"{path}: sample {n} ({sample.get('sample_id', '?')})"
        conv = sample["conversation"]
        turns: list[Turn] = []
        s = 1
        while f"session_{s}" in conv:
            try:
                start = parse_session_time(conv[f"session_{s}_date_time"]).timestamp()
            except (KeyError, ValueError) as exc:
                raise LocomoError(f"{where}: session_{s}_date_time: {exc}") from None
            before = ""
            for i, raw in enumerate(conv[f"session_{s}"]):
                text = str(raw["text"]).strip()
                if raw.get("blip_caption"):
                    text += f" [shares a photo: {raw['blip_caption']}]"
                turn = Turn(raw["dia_id"], raw["speaker"], text, start + i, s, before)
                turns.append(turn)
                before = turn.content
            s += 1
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = [e for e in _evidence(qa.get("evidence", [])) if e in known]
            questions.append(LocomoQuestion(qa["question"], evidence, int(qa["category"])))
        end = max(t.at for t in turns) + 1
        conversations.append(Conversation(str(sample["sample_id"]), turns, questions, end))
    return conversations


Ranker = Callable[[Conversation, str, int], list[str]]
"""(conversation, question, k) → memory ids, best first."""


@dataclass(slots=True)
class Result:
    recall: dict[str, float]  # by category name, plus "all"
    counts: dict[str, int]
    beaten: int = 0
    """Questions where another method found more evidence (filled by the caller)."""


def evaluate(
    conversations: list[Conversation], rank: Ranker, k: int = 5
) -> tuple[Result, dict[tuple[str, int], float]]:
    """Evidence recall@k per category and overall (categories 1–4, questions with evidence),
    and each question's share, keyed by (sample id, question index)."""
    shares: dict[str, list[float]] = defaultdict(list)
    each: dict[tuple[str, int], float] = {}
    for conv in conversations:
        for n, q in enumerate(conv.questions):
            name = CATEGORIES.get(q.category)
            if name is None or not q.evidence:
                continue
            top = set(rank(conv, q.q, k))
            wanted = [conv.ids[e] for e in q.evidence]
            share = sum(w in top for w in wanted) / len(wanted)
            each[(conv.sample_id, n)] = share
            shares[name].append(share)
            shares["all"].append(share)
    return (
        Result(
            {key: sum(v) / len(v) for key, v in shares.items()},
            {key: len(v) for key, v in shares.items()},
        ),
        each,
    )
