"""Fitting the prompt into the context window (X1–X5).

The budget is the context size minus the tokens reserved for the answer, split system 15 %,
history 40 %, memory 30 % and tools 15 %; a part that needs less than its share leaves the rest
to the others (system first, then history, memory, tools). When a part is over its limit it is
degraded, always in this order:

1. history: the rounds before the last two are dropped whole and replaced by a progress line of
   at most 100 characters (goal / done / next) in the system message;
2. memory: recalled memories are dropped from the lowest score up, then index lines from the end;
3. tools: the tools least related to the request are hidden (tools the run already used stay).

A message is never cut in the middle. When the rounds kept are still over the window (one long
run of large results), the run's earlier tool results give way whole, oldest first, each to a
line saying what was left out; the newest result stays. Every degradation is reported with the
tokens before and after (``ContextCompressed`` events). Tokens are counted by the model's
tokenizer when the engine has one (llama.cpp's ``/tokenize``), else estimated at 3.5 characters
a token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lar.types import ContextCompressed, Message

if TYPE_CHECKING:
    from lar.engines.base import Engine
    from lar.tools.base import Tool

__all__ = [
    "SHARES",
    "TokenCounter",
    "MemoryParts",
    "Fitted",
    "allocate",
    "fit",
    "rounds",
    "render_memory",
    "PER_MESSAGE",
    "Compressed",
    "compress_messages",
    "shorten",
]

SHARES: dict[str, float] = {"system": 0.15, "history": 0.40, "memory": 0.23, "tools": 0.22}
PER_MESSAGE = 5  # chat-template tokens around each message (<|im_start|>role … <|im_end|>)
KEEP_ROUNDS = 2
SUMMARY_CHARS = 100


class TokenCounter:
    """Counts with the engine's tokenizer, remembering every text it has counted."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine
        self.exact: bool | None = None
        self._cache: dict[str, int] = {}

    @staticmethod
    def estimate(text: str) -> int:
        return math.ceil(len(text) / 3.5)

    async def count(self, texts: Sequence[str]) -> list[int]:
        keys = [hashlib.blake2b(t.encode(), digest_size=16).hexdigest() for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            counts = None
            if self.engine is not None and self.exact is not False:
                counts = await self.engine.count_tokens([by_key[k] for k in missing])
                self.exact = counts is not None
            if counts is None:
                counts = [self.estimate(by_key[k]) for k in missing]
            self._cache.update(zip(missing, counts, strict=True))
        return [self._cache[k] for k in keys]

    async def one(self, text: str) -> int:
        return (await self.count([text]))[0] if text else 0


@dataclass(slots=True)
class MemoryParts:
    """What memory adds to the system prompt, kept apart so it can be cut by score."""

    index: list[str] = field(default_factory=list)
    recalled: list[tuple[str, float]] = field(default_factory=list)  # (line, score)
    working: str = ""

    @classmethod
    def from_state(cls, value: Any) -> MemoryParts:
        if isinstance(value, MemoryParts):
            return value
        if isinstance(value, dict):
            return cls(
                list(value.get("index", [])),
                [(str(t), float(s)) for t, s in value.get("recalled", [])],
                str(value.get("working", "")),
            )
        return cls()

    def to_state(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "recalled": [list(r) for r in self.recalled],
            "working": self.working,
        }


def render_memory(parts: MemoryParts) -> str:
    blocks = []
    if parts.index:
        blocks.append("Memory index (memory_search finds details):\n" + "\n".join(parts.index))
    if parts.recalled:
        lines = "\n".join(line for line, _ in parts.recalled)
        head = "What the user told you earlier (when it answers the request, answer from it):"
        blocks.append(f"{head}\n{lines}")
    if parts.working:
        blocks.append(f"Working memory: {parts.working}")
    return "\n\n".join(blocks)


def allocate(available: int, need: dict[str, int]) -> dict[str, int]:
    """Each part's limit: its share, plus what the parts before it in order left unused."""
    share = {p: int(available * s) for p, s in SHARES.items()}
    pool = sum(max(0, share[p] - need.get(p, 0)) for p in SHARES)
    limits = {}
    for p in SHARES:
        extra = min(pool, max(0, need.get(p, 0) - share[p]))
        pool -= extra
        limits[p] = share[p] + extra
    return limits


def rounds(history: Sequence[Message]) -> list[list[Message]]:
    """Split into rounds, each starting at a user message (anything before the first joins it)."""
    out: list[list[Message]] = []
    for m in history:
        if m.role == "user" or not out:
            out.append([m])
        else:
            out[-1].append(m)
    return out


def _left_out(message: Message) -> str:
    """What stands for a tool result left out to fit the window: which call, how long."""
    what = f"the result of {message.name}" if message.name else "this tool result"
    return (
        f"[{what} ({len(message.content)} characters) was left out to fit the context "
        "window; call it again if it is still needed]"
    )


def shorten(text: str, width: int) -> str:
    """One line of at most ``width`` characters, cut with "…"."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def progress_line(dropped: list[list[Message]], kept: list[list[Message]]) -> str:
    """≤ 100 characters: the conversation's goal, how much is done, where it stands.

    It depends only on the dropped rounds, so it stays the same while the cut does."""
    goal = shorten(dropped[0][0].content, 34) if dropped else ""
    last = shorten(dropped[-1][0].content, 30) if dropped else ""
    line = f"goal: {goal}; done: {len(dropped)} earlier rounds, last: {last}"
    return shorten(line, SUMMARY_CHARS)


_WORD = re.compile(r"[a-z0-9]+")


def _relevance(tool: Tool, request: str) -> int:
    words = set(_WORD.findall(request.lower()))
    text = f"{tool.name.replace('_', ' ')} {tool.description}".lower()
    return len(words & set(_WORD.findall(text)))


@dataclass(slots=True)
class Fitted:
    history: list[Message]
    memory: MemoryParts
    tools: list[Tool]
    summary: str
    events: list[ContextCompressed]
    tokens: dict[str, int]
    limits: dict[str, int]
    cut: int = 0  # rounds dropped from the start of the history


async def fit(
    *,
    counter: TokenCounter,
    n_ctx: int,
    reserve: int,
    system: str,
    history: list[Message],
    memory: MemoryParts,
    tools: list[Tool],
    listing: Any,
    used_tools: set[str] = frozenset(),  # type: ignore[assignment]
    cut: int = 0,
) -> Fitted:
    """Degrade history, then memory, then tools until each part fits its limit; when the
    whole is still over the window, the history is cut after all.

    ``listing(tools) -> str`` renders the tool part as the model will see it. ``cut`` is the
    number of rounds the previous turn dropped: while the rounds after it still fit, the same
    cut is kept, so the prompt's beginning stays the same and the engine reuses its cache.
    """
    available = max(256, n_ctx - reserve)
    events: list[ContextCompressed] = []

    async def history_tokens(msgs: list[Message]) -> int:
        counts = await counter.count([m.content for m in msgs])
        return sum(counts) + PER_MESSAGE * len(msgs)

    async def needs(
        h: list[Message], mem: MemoryParts, ts: list[Tool], summary: str
    ) -> dict[str, int]:
        extra = f"\nProgress so far: {summary}" if summary else ""
        return {
            "system": await counter.one(system + extra) + PER_MESSAGE,
            "history": await history_tokens(h),
            "memory": await counter.one(render_memory(mem)),
            "tools": await counter.one(listing(ts)) if ts else 0,
        }

    kept_history, mem, shown, summary = (
        list(history),
        MemoryParts(list(memory.index), list(memory.recalled), memory.working),
        list(tools),
        "",
    )
    need = await needs(kept_history, mem, shown, summary)
    limits = allocate(available, need)

    # 1. history: keep the last two rounds whole, the rest becomes one progress line.
    all_rounds = rounds(kept_history)
    dropped_n = 0

    async def cut_history() -> None:
        nonlocal kept_history, summary, need, limits, dropped_n
        before = need["history"]
        dropped_n = len(all_rounds) - KEEP_ROUNDS
        if 0 < cut < dropped_n:  # the previous cut may still be enough
            trial = [m for r in all_rounds[cut:] for m in r]
            trial_need = await needs(
                trial, mem, shown, progress_line(all_rounds[:cut], all_rounds[cut:])
            )
            trial_limits = allocate(available, trial_need)
            if trial_need["history"] <= trial_limits["history"] and (
                sum(trial_need.values()) <= available
            ):
                dropped_n = cut
        dropped, kept = all_rounds[:dropped_n], all_rounds[dropped_n:]
        kept_history = [m for r in kept for m in r]
        summary = progress_line(dropped, kept)
        need = await needs(kept_history, mem, shown, summary)
        events.append(
            ContextCompressed(
                "history",
                before,
                need["history"],
                f"{len(dropped)} earlier rounds → progress line",
            )
        )
        limits = allocate(available, need)

    if need["history"] > limits["history"] and len(all_rounds) > KEEP_ROUNDS:
        await cut_history()

    # 2. memory: the lowest-scoring recalled memories go first, then index lines from the end.
    if need["memory"] > limits["memory"]:
        before = need["memory"]
        dropped_recalled = dropped_index = 0
        while need["memory"] > limits["memory"] and (mem.recalled or mem.index):
            if mem.recalled:
                worst = min(range(len(mem.recalled)), key=lambda i: mem.recalled[i][1])
                mem.recalled.pop(worst)
                dropped_recalled += 1
            else:
                mem.index.pop()
                dropped_index += 1
            need = await needs(kept_history, mem, shown, summary)
            limits = allocate(available, need)
        events.append(
            ContextCompressed(
                "memory",
                before,
                need["memory"],
                f"{dropped_recalled} recalled, {dropped_index} index lines dropped",
            )
        )

    # 3. tools: hide the least related to the latest request (never one the run already used).
    if need["tools"] > limits["tools"] and shown:
        before = need["tools"]
        request = next((m.content for m in reversed(kept_history) if m.role == "user"), "")
        order = sorted(
            (t for t in shown if t.name not in used_tools), key=lambda t: _relevance(t, request)
        )
        hidden: list[str] = []
        for tool in order:
            if need["tools"] <= limits["tools"] or len(shown) <= 1:
                break
            shown = [t for t in shown if t is not tool]
            hidden.append(tool.name)
            need = await needs(kept_history, mem, shown, summary)
            limits = allocate(available, need)
        events.append(
            ContextCompressed("tools", before, need["tools"], "hidden: " + ", ".join(hidden))
        )

    # 4. still over the window (a part that cannot shrink below its need, such as the one
    # tool left): the history gives way after all.
    if sum(need.values()) > available and dropped_n == 0 and len(all_rounds) > KEEP_ROUNDS:
        await cut_history()

    # 5. still over: the rounds kept are this run's own (a long run of large results).
    events += await _leave_out_results(kept_history, need, available, needs, mem, shown, summary)
    limits = allocate(available, need)
    return Fitted(kept_history, mem, shown, summary, events, need, limits, dropped_n)


async def _leave_out_results(
    history: list[Message],
    need: dict[str, int],
    available: int,
    needs: Any,
    *parts: Any,
) -> list[ContextCompressed]:
    """While the request is over the window, the run's earlier tool results give way whole,
    oldest first, each to a line saying so; the newest result, what the next step works from,
    is kept. ``history`` and ``need`` are updated in place; the event, if any was left out."""
    before, left_out = need["history"], 0
    for i in [i for i, m in enumerate(history) if m.role == "tool"][:-1]:
        if sum(need.values()) <= available:
            break
        history[i] = dataclasses.replace(history[i], content=_left_out(history[i]))
        left_out += 1
        need.update(await needs(history, *parts))
    if not left_out:
        return []
    detail = f"{left_out} earlier tool results of this run left out"
    return [ContextCompressed("history", before, need["history"], detail)]


@dataclass(slots=True)
class Compressed:
    """A history cut for its number of messages (A3)."""

    history: list[Message]
    """The request that led to the cut part (when cut off), then the messages kept."""
    summary: str
    """≤ 100 characters on what was left out."""
    cut: int
    """Messages left out from the start of the history."""
    left_out: int


def compress_messages(history: Sequence[Message], limit: int, cut: int = 0) -> Compressed | None:
    """The history with its older messages left out once it has more than ``limit`` (A3);
    None while it has no more.

    About half are kept, from a user or assistant message on (a tool result never loses its
    call); when that cuts into a request's round, the request itself is kept in front. The
    previous ``cut`` is kept while the messages after it still number at most ``limit``, so
    the prompt's beginning stays the same and the engine reuses its cache.
    """
    if len(history) <= limit:
        return None
    if not 0 < cut < len(history) or len(history) - cut > limit:
        cut = _boundary(history, len(history) - max(2, limit // 2))
    if cut <= 0:
        return None
    dropped, kept = list(history[:cut]), list(history[cut:])
    pinned = []
    if kept[0].role != "user":
        request = next((m for m in reversed(dropped) if m.role == "user"), None)
        if request is not None:
            pinned = [request]
    calls = [c.name for m in dropped for c in (m.tool_calls or ())]
    names = ", ".join(dict.fromkeys(calls))
    left_out = len(dropped) - len(pinned)
    line = f"{left_out} earlier messages left out"
    if calls:
        line += f"; {len(calls)} tool calls ({names})"
    return Compressed(pinned + kept, shorten(line, SUMMARY_CHARS), cut, left_out)


def _boundary(history: Sequence[Message], at: int) -> int:
    """The first index from ``at`` on where a kept part may start: a user or assistant
    message, never a tool result; 0 when there is none."""
    for i in range(max(1, at), len(history)):
        if history[i].role in ("user", "assistant"):
            return i
    return 0
