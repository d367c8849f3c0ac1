"""Native track (T2): tools go to the API as JSON Schema; calls come back as ``tool_calls``.

Models that claim native tool support still often answer with the call as text (the embedded
Qwen 0.5B does exactly this), so the protocol parser always runs on the content as a fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lar.calling.protocol import KnownTools, ParseResult, parse
from lar.calling.repair import load_json
from lar.types import ModelResponse, ToolCall

__all__ = ["decode_arguments", "extract_calls"]


def decode_arguments(raw: Any) -> tuple[dict[str, Any], bool]:
    """A native call's ``arguments`` (a JSON string by the OpenAI convention) → dict."""
    if isinstance(raw, dict):
        return raw, False
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, False
    value, repaired = load_json(str(raw))
    if isinstance(value, dict):
        return value, repaired
    return {"input": raw}, True


def extract_calls(
    response: ModelResponse, known: KnownTools, *, codeact: bool = False
) -> ParseResult:
    """Calls from a response: native ``tool_calls`` if any, else whatever the text holds."""
    if response.tool_calls:
        calls: Sequence[ToolCall] = response.tool_calls
        return ParseResult(calls=list(calls), text=response.content.strip(), format="native")
    return parse(response.content, known, codeact=codeact)
