"""Native track (T2): tools go to the API as JSON Schema; calls come back as ``tool_calls``.

Models that claim native tool support still often answer with the call as text (the embedded
Qwen 0.5B does exactly this), so the protocol parser always runs on the content as a fallback.
"""

from __future__ import annotations

from collections.abc import Sequence

from lar.calling.protocol import KnownTools, ParseResult, parse
from lar.types import ModelResponse, ToolCall

__all__ = ["extract_calls"]


def extract_calls(
    response: ModelResponse, known: KnownTools, *, codeact: bool = False
) -> ParseResult:
    """Calls from a response: native ``tool_calls`` if any, else whatever the text holds."""
    if response.tool_calls:
        calls: Sequence[ToolCall] = response.tool_calls
        return ParseResult(calls=list(calls), text=response.content.strip(), format="native")
    return parse(response.content, known, codeact=codeact)
