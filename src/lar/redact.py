"""Secret redaction (O6): configured keys and anything shaped like a common key format are masked
before an event leaves the agent, so logs, --json output and (later) traces never hold them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

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
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    event_from_json,
    event_to_json,
)

__all__ = ["Redactor", "MASK"]

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


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        known = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)
        parts = [re.escape(s) for s in known] + _PATTERNS
        self._rx = re.compile("|".join(parts))

    def text(self, value: str) -> str:
        return self._rx.sub(MASK, value)

    def event(self, event: Event) -> Event:
        """The event itself when clean (the common case: a regex scan of its text fields), else a
        masked copy."""
        if not any(self._rx.search(text) for text in _texts(event)):
            return event
        data = event_to_json(event)
        # Mask inside the JSON text; a secret never contains JSON syntax, so it stays valid.
        return event_from_json(self._rx.sub(MASK, data))


def _texts(event: Event) -> Iterator[str]:
    """The fields of an event that can carry user, model or tool text."""
    if isinstance(event, TextDelta | Final):
        yield event.text
    elif isinstance(event, Notice | ErrorEvent):
        yield event.message
    elif isinstance(event, MemoryRecalled):
        yield event.query
        yield json.dumps(event.items, default=str)
    elif isinstance(event, MemoryWritten):
        yield from (event.action, event.content, event.reason)
        yield from (event.memory_id or "", event.replaced or "")
    elif isinstance(event, ContextCompressed):
        yield from (event.part, event.detail)
    elif isinstance(event, Routed):
        yield from (event.model, event.router, event.rule, event.reason)
        yield from (event.query_class, event.tier)
    elif isinstance(event, ModelCalled):
        yield from event.failover  # engine errors can quote a URL
    elif isinstance(event, ToolCallStarted):
        yield event.call.raw or ""
        if event.call.arguments:
            yield json.dumps(event.call.arguments, default=str)
    elif isinstance(event, ToolCallFinished):
        yield event.result.content
        value = event.result.value
        if isinstance(value, str):
            yield value
        elif value is not None and not isinstance(value, int | float | bool):
            yield json.dumps(value, default=str)
