"""Secret redaction (O6): configured keys and anything shaped like a common key format are masked
before an event leaves the agent, so logs, --json output and (later) traces never hold them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lar.types import (
    ContextCompressed,
    ErrorEvent,
    Event,
    Final,
    MemoryRecalled,
    MemoryWritten,
    ModelCalled,
    Notice,
    Routed,
    SubTaskFinished,
    SubTaskStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    event_from_json,
    event_to_json,
)

__all__ = ["Redactor", "MASK", "mask_strings"]

MASK = "[redacted]"
_PATTERNS = [
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
    r"AKIA[0-9A-Z]{16}",  # AWS access key id
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"(?i:bearer)\s+[A-Za-z0-9_\-\.=]{20,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
]


# The password of a URL (postgres://user:PASSWORD@host): only the password is masked.
_URL_PASSWORD = r"(?P<url>[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)(?P<pw>[^/\s@]+)(?=@)"


class Redactor:
    """Masks configured secrets and common key formats in raw text.

    Matching is on the text itself, never on an escaped form (JSON), so secrets holding quotes,
    backslashes or non-ASCII characters are found as written.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        known = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)
        parts = [re.escape(s) for s in known] + _PATTERNS + [_URL_PASSWORD]
        self._rx = re.compile("|".join(parts))

    @staticmethod
    def _mask(match: re.Match[str]) -> str:
        return match.group("url") + MASK if match.group("pw") else MASK

    def text(self, value: str) -> str:
        return self._rx.sub(self._mask, value)

    def event(self, event: Event) -> Event:
        """The event itself when clean (the common case: a regex scan of its text fields), else a
        masked copy."""
        if not any(self._rx.search(text) for text in _texts(event)):
            return event
        return event_from_json(json.dumps(self._masked(json.loads(event_to_json(event)))))

    def _masked(self, value: Any) -> Any:
        return mask_strings(value, self.text)


def mask_strings(value: Any, mask: Callable[[str], str]) -> Any:
    """Every string in a JSON-like value passed through ``mask`` (keys too), structure kept.

    Mask before ``json.dumps``, never after: escaping hides quotes, backslashes and non-ASCII
    characters of a secret from a pattern written for the raw text.
    """
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list | tuple):
        return [mask_strings(v, mask) for v in value]
    if isinstance(value, dict):
        return {mask(str(k)): mask_strings(v, mask) for k, v in value.items()}
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif value is not None and not isinstance(value, int | float | bool):
        yield str(value)


def _texts(event: Event) -> Iterator[str]:
    """The fields of an event that can carry user, model or tool text."""
    if isinstance(event, TextDelta | Final):
        yield event.text
    elif isinstance(event, Notice | ErrorEvent):
        yield event.message
    elif isinstance(event, MemoryRecalled):
        yield event.query
        yield from _strings(event.items)
    elif isinstance(event, MemoryWritten):
        yield from (event.action, event.content, event.reason)
        yield from (event.memory_id or "", event.replaced or "")
    elif isinstance(event, ContextCompressed):
        yield from (event.part, event.detail)
    elif isinstance(event, SubTaskStarted):
        yield from (event.id, event.agent, event.task, event.run_id)
    elif isinstance(event, SubTaskFinished):
        yield from (event.id, event.agent, event.reason, event.text, event.run_id)
    elif isinstance(event, Routed):
        yield from (event.model, event.router, event.rule, event.reason)
        yield from (event.query_class, event.tier)
    elif isinstance(event, ModelCalled):
        yield from event.failover  # engine errors can quote a URL
    elif isinstance(event, ToolCallStarted):
        yield event.call.raw or ""
        yield from _strings(event.call.arguments)
    elif isinstance(event, ToolCallFinished):
        yield event.result.content
        yield from _strings(event.result.value)
