"""What the model is sent each turn: the system message, the history as the track renders it,
fitted to the context window (X2–X5)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from lar.agents.budget import Budget
from lar.agents.context import MemoryParts, TokenCounter, fit, render_memory
from lar.calling.constrained import constrained_system_prompt
from lar.calling.prompt import (
    ANSWER_MODE_TAIL,
    FAILED_TAIL,
    LANGUAGE_TAIL,
    NEXT_STEP_TAIL,
    SKILL_PREFIX,
    SKILL_TAIL,
    answer_mode_note,
    failed_only,
    fold_tool_results,
    opened_skill,
    protocol_system_prompt,
)
from lar.calling.relevance import request_language
from lar.tools.base import Tool, ToolContext
from lar.tools.builtin.interaction import CHECKPOINT_KEY
from lar.types import Message, ToolResult

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.policy import Policy
    from lar.agents.runner import Runner
    from lar.calling.relevance import Relevance
    from lar.engines.base import Engine
    from lar.telemetry.records import EnergyMeter

__all__ = [
    "Track",
    "LoopSettings",
    "DEFAULT_SYSTEM_PROMPT",
    "Carried",
    "system_message",
    "render_history",
    "with_nudge",
    "fit_request",
    "CallSniffer",
    "loop_settings",
    "listing_every",
]


@dataclass(slots=True)
class Carried:
    """What a session carries from one run to the next for its prompts (typed, and never in
    ``ToolContext.state``, which tools see)."""

    memory: MemoryParts | None = None
    """What memory contributes to the system prompt (index, recall, last task)."""
    cut: int = 0
    """Rounds of history the last prompt left out (kept out while the rest fits)."""
    message_cut: int = 0
    """Messages the last prompt left out for their number (A3; kept while the rest is few)."""

    def resume(self, state: dict[str, Any]) -> None:
        """Take the parts a checkpoint written before this class kept in the tools' state."""
        self.cut = int(state.pop("context_cut", 0) or 0)
        memory = state.pop("memory_context", None)
        if memory is not None:
            self.memory = MemoryParts.from_state(memory)


Track = Literal["native", "protocol", "constrained"]

DEFAULT_SYSTEM_PROMPT = (
    "You are Lar, a helpful assistant running on the user's own computer. "
    "Answer briefly and correctly. Use a tool when it helps; never invent tool results. "
    "You act only through the listed tools; say plainly when you cannot do something here."
)


@dataclass(slots=True)
class LoopSettings:
    track: Track = "protocol"
    max_turns: int = 8
    stream: bool = False
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    params: dict[str, Any] = field(default_factory=dict)
    codeact: bool = False
    """CodeAct (A4): the one tool takes Python; a reply's ```python block is its call."""
    n_ctx: int | None = None
    """Context window; when set, the prompt is fitted to it (X2–X5)."""
    reserve: int = 512
    """Tokens kept free for the answer."""
    counter: TokenCounter | None = None
    """Shared across runs so a text is tokenized once."""
    meter: EnergyMeter | None = None
    """Measures each model call's energy (O2); None: not measured."""
    relevance: Relevance | None = None
    """Scores a run's first calls against the request (lar.calling.relevance), for policies."""
    policies: Sequence[Policy] = ()
    """Consulted at each hook, in order (lar.agents.policy); none: the model's replies as is."""
    listing_every: int = 10
    """X6, text tracks: the full tool listing on the first turn and every this many turns; in
    between a one-line reminder of the tools' signatures. 1: the full listing every turn. (The
    native track hands the engine its tools' schemas on every call.)"""
    max_messages: int = 100
    """A3: a history longer than this is compressed (lar.agents.context.compress_messages)."""
    budget: Budget = field(default_factory=Budget)
    """Tokens and wall time the run may use (A2)."""
    name_the_language: bool = False
    """Text tracks: the instruction after a tool result names the request's language where it
    is surely not English (``agent.name_the_language``)."""
    accounts_in_language: bool = False
    """Lar's own account of what did not run, in English, is put in the request's language by
    one more model call (``agent.accounts_in_language``; lar.agents.answers)."""

    def full_listing(self, turn: int) -> bool:
        """Whether turn ``turn`` (1-based) of a run gets the full tool listing (X6)."""
        return self.listing_every <= 1 or (turn - 1) % self.listing_every == 0


def system_message(
    settings: LoopSettings,
    tools: Sequence[Tool],
    ctx: ToolContext,
    *,
    answer_mode: bool,
    memory: MemoryParts | None = None,
    summary: str = "",
    history: Sequence[Message] = (),
    full: bool = True,
) -> Message:
    """``full``: the full tool listing, else the one-line reminder (X6, text tracks)."""
    base = settings.system_prompt
    if answer_mode:
        text = f"{base}\n\n{answer_mode_note(history)}"
    elif settings.codeact:
        text = codeact_system_prompt(base, tools)
    elif settings.track == "protocol":
        text = protocol_system_prompt(base, tools, full=full)
    elif settings.track == "constrained":
        text = constrained_system_prompt(base, tools, full=full)
    else:
        text = base
    rendered = render_memory(memory) if memory is not None else ""
    if rendered:
        text += f"\n\n{rendered}"
    if summary:
        text += f"\n\nProgress so far: {summary}"
    return Message("system", text + checkpoint_block(ctx))


def codeact_system_prompt(base: str, tools: Sequence[Tool]) -> str:
    """CodeAct (lar.agents.codeact): its tool's description is the whole instruction — the
    functions the code may call and how to reply — and no tool-call format is shown."""
    return "\n\n".join([base, *(t.description for t in tools)]) if tools else base


def checkpoint_block(ctx: ToolContext) -> str:
    """The model's own working notes (``update_working_checkpoint``), for the system prompt."""
    checkpoint = ctx.state.get(CHECKPOINT_KEY)
    return f"\n\nYour notes on this task:\n{checkpoint}" if checkpoint else ""


def render_history(
    history: list[Message], track: Track, *, answer_mode: bool, name_the_language: bool = False
) -> list[Message]:
    """The history as the text tracks send it: tool results folded into the user's message,
    with an instruction after them — which names the request's language when
    ``name_the_language`` and it is surely not English (``request_language``)."""
    if track == "native":
        return history
    rendered = fold_tool_results(history)
    if rendered and rendered[-1].role == "user" and "<tool_result" in rendered[-1].content:
        # An instruction right after the data steers small models better than the system
        # prompt. With the tools still listed the model may call the next one it needs.
        tail = ANSWER_MODE_TAIL if answer_mode else NEXT_STEP_TAIL
        if not answer_mode and opened_skill(history):
            tail = SKILL_TAIL
        elif answer_mode and failed_only(history):
            tail = FAILED_TAIL
        if name_the_language and tail is not SKILL_TAIL:
            language = request_language(_last_request(history))
            if language is not None:
                tail += LANGUAGE_TAIL.format(language=language)
        rendered[-1] = Message("user", rendered[-1].content + tail)
    return rendered


def _last_request(history: Sequence[Message]) -> str:
    return next((m.content for m in reversed(history) if m.role == "user"), "")


def with_nudge(request: list[Message], nudge: str) -> list[Message]:
    """The request with a one-turn correction after the user's last words.

    Appended to the last user message rather than sent after the model's faulty reply: shown
    their own reply, small models repeat it word for word (measured: a described call came
    back unchanged).
    """
    last = request[-1]
    if last.role == "user":
        return [*request[:-1], Message("user", f"{last.content}\n\n{nudge}")]
    return [*request, Message("user", nudge)]


def tool_listing(settings: LoopSettings, tools: Sequence[Tool], *, full: bool = True) -> str:
    """The tool part of the request as the model sees it on ``settings.track``."""
    if settings.codeact:
        return codeact_system_prompt("", tools)
    if settings.track == "protocol":
        return protocol_system_prompt("", tools, full=full)
    if settings.track == "constrained":
        return constrained_system_prompt("", tools, full=full)
    return json.dumps([t.openai_schema() for t in tools])


async def with_skills_share(
    settings: LoopSettings, counter: TokenCounter, tools: Sequence[Tool], tokens: dict[str, int]
) -> dict[str, int]:
    """``tokens`` and, when skills are listed, ``skills``: their share of the tool part."""
    rest = [t for t in tools if not t.name.startswith(SKILL_PREFIX)]
    if len(rest) == len(tools):
        return dict(tokens)
    without = await counter.one(tool_listing(settings, rest)) if rest else 0
    return {**tokens, "skills": max(0, tokens["tools"] - without)}


async def fit_request(
    settings: LoopSettings,
    counter: TokenCounter,
    ctx: ToolContext,
    history: list[Message],
    tools: Sequence[Tool],
    answer_mode: bool,
    completed: dict[str, ToolResult],
    carried: Carried,
    *,
    added: int = 0,
    full: bool = True,
) -> Any:
    """The request fitted to the context window, with room kept for the reply and ``added``
    tokens more (what the request, as rendered, was found to need beyond the parts' count)."""
    assert settings.n_ctx is not None
    base = settings.system_prompt + (f"\n\n{answer_mode_note(history)}" if answer_mode else "")
    base += checkpoint_block(ctx)

    def listing(ts: Sequence[Tool]) -> str:
        return tool_listing(settings, ts, full=full)

    return await fit(
        counter=counter,
        n_ctx=settings.n_ctx,
        reserve=settings.reserve + added,
        system=base,
        history=history,
        memory=carried.memory or MemoryParts(),
        tools=[] if answer_mode else list(tools),
        listing=listing,
        used_tools={r.name for r in completed.values()},
        cut=carried.cut,
    )


_CALL_MARKERS = ("<tool", "<function", "{", "[", "```", "action:", "[tool_calls]", "<think")


class CallSniffer:
    """Holds back streamed text while it may still turn out to be a tool call."""

    def __init__(self) -> None:
        self.buffer = ""
        self.released = False

    def feed(self, text: str) -> str:
        if self.released:
            return text
        self.buffer += text
        head = self.buffer.lstrip().lower()
        undecided = not head or any(head.startswith(m) or m.startswith(head) for m in _CALL_MARKERS)
        if undecided:
            return ""
        self.released = True
        out, self.buffer = self.buffer, ""
        return out


def listing_every(configured: int | None, engine: Engine) -> int:
    """X6's interval: the configured one, else 1 on an engine with a prompt cache (the same
    listing every turn is free there, a reminder instead costs the whole prompt again: measured
    on the embedded model, docs/evals.md), else 10."""
    if configured is not None:
        return configured
    return 1 if engine.prompt_cache else 10


def loop_settings(
    agent: Agent, runner: Runner, engine: Engine, cfg: Any
) -> tuple[Track, LoopSettings]:
    """The track and loop settings ``agent`` gets on ``engine`` (configured as ``cfg``, or
    None for an engine given directly): the agent's choices, then the config's, then defaults;
    the policies are the model's profile as the agent or the config edit it."""
    from lar.agents.policies import DEFAULT_PROFILE
    from lar.agents.policy import resolve_policies
    from lar.agents.results import resolve_track
    from lar.engines.catalog import describe, lookup

    config = runner.config
    cfg_track = cfg.track if cfg else None
    track = resolve_track(engine, agent.track if agent.track not in (None, "auto") else cfg_track)
    info = describe(cfg) if cfg is not None else lookup(engine.model or engine.name)
    setting: Sequence[str] | None
    if agent.policies is not None:
        setting, where = agent.policies, "Agent(policies=...)"
    else:
        setting, where = config.agent.policies, "agent.policies"
    params = dict(agent.params)
    budget = Budget(
        tokens=agent.token_budget or config.agent.token_budget,
        seconds=agent.time_budget_s or config.agent.time_budget_s,
    )
    settings = LoopSettings(
        track=track,
        max_turns=agent.max_turns or config.agent.max_turns,
        listing_every=listing_every(config.agent.tool_listing_every, engine),
        max_messages=config.agent.max_messages,
        budget=budget,
        name_the_language=config.agent.name_the_language,
        accounts_in_language=config.agent.accounts_in_language,
        system_prompt=agent.system_prompt or config.agent.system_prompt or DEFAULT_SYSTEM_PROMPT,
        params=params,
        n_ctx=agent.n_ctx or engine.context_size,
        reserve=params.get("max_tokens") or (cfg.max_tokens if cfg else 512),
        counter=runner.counter(engine),
        meter=runner.meter,
        relevance=runner.relevance() if track != "native" else None,
        policies=resolve_policies(
            info.policies if info is not None else None,
            setting,
            track,
            default=DEFAULT_PROFILE,
            where=where,
        ),  # fmt: skip
    )
    return track, settings
