"""The intent parser (D2): a request to an entry state without a model.

The domain expert writes, per intent, keywords and example phrasings, and a synonym table (CSV
``term,synonym`` rows, or a YAML mapping ``term: [synonyms]``) that maps the words people use to
the terms of the table — in any language the users write. A request is normalised (case, accents,
punctuation), its synonyms replaced by their terms, and each intent scored from its keywords
(matched with typo tolerance, rapidfuzz) and its closest example. The best intent is taken only
when its confidence reaches the role's threshold and is clearly ahead of the next one; otherwise
the parser returns the top three as choices and enters no state.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from rapidfuzz import fuzz

from lar.errors import LarError
from lar.roles.spec import Role

__all__ = ["IntentParser", "IntentMatch", "load_synonyms", "normalize"]

_WORD = re.compile(r"\w+")
TYPO_RATIO = 84.0
"""A request word matches a keyword of 4+ letters at this rapidfuzz ratio (one slip in 6–7)."""
KEYWORD_WEIGHT = 0.65
MARGIN = 0.08
"""The best intent must lead the next by this much, or the request is ambiguous."""


class IntentError(LarError):
    pass


def normalize(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_WORD.findall(stripped))


def load_synonyms(source: str | Mapping[str, Sequence[str]] | None, folder: Path) -> dict[str, str]:
    """``{normalised variant: normalised term}`` from a file (CSV or YAML) or a mapping."""
    if source is None:
        return {}
    table: dict[str, list[str]] = {}
    if isinstance(source, Mapping):
        table = {str(k): [str(v) for v in vs] for k, vs in source.items()}
    else:
        path = folder / source
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise IntentError(
                f"{path}: cannot read the synonym table ({exc.strerror or exc})"
            ) from None
        if path.suffix.lower() == ".csv":
            for n, row in enumerate(csv.reader(text.splitlines()), 1):
                if not row or row[0].startswith("#") or (n == 1 and row[0].strip() == "term"):
                    continue
                if len(row) < 2:
                    raise IntentError(f"{path}:{n}: a row is `term,synonym`")
                table.setdefault(row[0].strip(), []).extend(s.strip() for s in row[1:] if s.strip())
        else:
            try:
                data = yaml.safe_load(text) or {}
            except yaml.YAMLError as exc:
                raise IntentError(f"{path}: not valid YAML ({exc})") from None
            if not isinstance(data, dict):
                raise IntentError(f"{path}: a synonym table is `term: [synonyms]`")
            table = {str(k): [str(v) for v in (vs or [])] for k, vs in data.items()}
    out: dict[str, str] = {}
    for term, variants in table.items():
        for v in variants:
            if normalize(v):
                out[normalize(v)] = normalize(term)
    return out


@dataclass(frozen=True, slots=True)
class IntentMatch:
    intent: str | None
    """The intent taken, or None: the request was unclear or out of scope."""
    state: str | None
    confidence: float
    choices: list[tuple[str, float]]
    """The top three intents with their confidence (offered when none is taken)."""


@dataclass(frozen=True, slots=True)
class _Intent:
    name: str
    state: str
    keywords: list[str]
    examples: list[str]


class IntentParser:
    def __init__(
        self,
        intents: Mapping[str, tuple[str, Sequence[str], Sequence[str]]],
        synonyms: Mapping[str, str] | None = None,
        threshold: float = 0.6,
    ) -> None:
        """``intents``: name → (entry state, keywords, examples)."""
        self.synonyms = dict(synonyms or {})
        self._phrases = sorted((k for k in self.synonyms if " " in k), key=lambda k: -len(k))
        self.threshold = threshold
        self.intents = [
            _Intent(
                name,
                state,
                list(dict.fromkeys(self.canon(k) for k in keywords if normalize(k))),
                [self.canon(e) for e in examples if normalize(e)],
            )
            for name, (state, keywords, examples) in intents.items()
        ]

    @classmethod
    def for_role(cls, role: Role) -> IntentParser | None:
        """The parser of a role's intents and synonym table (None: the role has no intents)."""
        spec = role.spec
        if not spec.intents:
            return None
        return cls(
            {n: (i.state, i.keywords, i.examples) for n, i in spec.intents.items()},
            load_synonyms(spec.synonyms, role.folder),
            spec.intent_threshold,
        )

    def canon(self, text: str) -> str:
        """Normalised, with synonyms (phrases first) replaced by their terms."""
        norm = f" {normalize(text)} "
        for phrase in self._phrases:
            norm = norm.replace(f" {phrase} ", f" {self.synonyms[phrase]} ")
        return " ".join(self.synonyms.get(w, w) for w in norm.split())

    @staticmethod
    def _hit(keyword: str, words: list[str], text: str) -> bool:
        if " " in keyword:
            return f" {keyword} " in f" {text} " or fuzz.partial_ratio(keyword, text) >= 92
        for w in words:
            if w == keyword:
                return True
            if len(keyword) >= 4 and len(w) >= 4 and fuzz.ratio(keyword, w) >= TYPO_RATIO:
                return True
        return False

    def score(self, text: str) -> list[tuple[str, float]]:
        canon = self.canon(text)
        words = canon.split()
        scored = []
        for intent in self.intents:
            hits = sum(self._hit(k, words, canon) for k in intent.keywords)
            kw = min(1.0, hits / 2)
            ex = max((fuzz.token_sort_ratio(canon, e) for e in intent.examples), default=0.0) / 100
            scored.append((intent.name, round(KEYWORD_WEIGHT * kw + (1 - KEYWORD_WEIGHT) * ex, 3)))
        return sorted(scored, key=lambda s: -s[1])

    def parse(self, text: str) -> IntentMatch:
        scored = self.score(text)
        if not scored:
            return IntentMatch(None, None, 0.0, [])
        best, conf = scored[0]
        runner_up = scored[1][1] if len(scored) > 1 else 0.0
        top = scored[:3]
        if conf >= self.threshold and conf - runner_up >= MARGIN:
            state = next(i.state for i in self.intents if i.name == best)
            return IntentMatch(best, state, conf, top)
        return IntentMatch(None, None, conf, top)
