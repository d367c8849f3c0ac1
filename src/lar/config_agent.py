"""The agent part of the configuration: ``agent:``, ``agents:`` (a delegate's sub-agents) and
``ray:`` (lar.config reads the file; these are its models)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["AGENT_KINDS", "AgentSettings", "SubAgentSettings", "RaySettings"]

AGENT_KINDS = ("loop", "react", "native", "simple", "codeact", "operative", "delegate")
"""Agent kinds Lar ships (lar.agents.kinds); plugins add theirs to the agent kind registry."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


def _known_kind(value: str) -> str:
    from lar.registry import Registry

    known = sorted({*AGENT_KINDS, *Registry.keys_of("agent kind")})
    if value not in known:
        raise ValueError(f"unknown agent kind {value!r}; known: {', '.join(known)}")
    return value


class AgentSettings(_Strict):
    max_turns: int = Field(8, ge=1, le=100)
    system_prompt: str | None = None
    workspace: str | None = None
    """Directory the file and code tools work in; default: the current directory."""
    off_topic_below: float | None = Field(0.15, ge=0.0, le=1.0)
    """Protocol track: first calls whose (narrow) tools all score below this similarity to the
    request are not run; the model answers without tools (lar.calling.relevance). null: off."""
    policies: list[str] | None = None
    """Policies for every model, replacing each model's profile; or edits of the profile when
    every entry starts with ``-`` or ``+`` (``["-more_calls"]``). Names: ``lar eval --help``."""
    name_the_language: bool = True
    """Text tracks: where the request is confidently in a language other than English
    (``lar.calling.relevance.request_language``), the instruction after each tool result names
    it ("Write the answer in Portuguese."). On dev draw 23 (20 requests in five languages, same
    prompt-cache mark) it took English answers from 14 to 2 and passed tasks from 2 to 11, none
    the other way (docs/evals.md); false turns it off."""
    accounts_in_language: bool = True
    """Where the request is confidently in a language other than English (or, too short for
    that, likely so: the model is then given the request to follow), Lar's own account of a
    call that was refused or failed (written in English, with how to allow it) is put in that
    language by one more model call, kept only when it carries every option (``--yes``),
    figure, address and file name of the account and adds no figure
    (lar.agents.answers.in_request_language); false: the account stays in English."""
    tool_listing_every: int | None = Field(None, ge=1, le=1000)
    """Text tracks (X6): the full tool listing on a run's first turn and every this many turns,
    a one-line reminder of the tools' signatures in between. 1: the full listing every turn.
    null: 1 on the embedded engine (its prompt cache makes a repeated listing free, a changed
    one costs the whole prompt again: +15 % time per task measured), 10 elsewhere."""
    max_messages: int = Field(100, ge=4, le=100_000)
    """A3: a history with more messages is compressed (the older half left out, summarised)."""
    token_budget: int | None = Field(None, ge=1)
    """Tokens (prompt + completion, every model call) one run may use; null: no limit (A2)."""
    time_budget_s: float | None = Field(None, gt=0)
    """Seconds one run may take; null: no limit (A2)."""
    kind: str = "loop"
    """How a run goes (A4): loop, react, native, simple, codeact, operative, delegate."""
    name: str | None = None
    """The agent's name: an operative agent keeps its state under ``operator:{name}:state``."""
    max_parallel: int = Field(3, ge=1, le=64)
    """A delegate's sub-agents running at once."""
    members: list[str] | None = None
    """A delegate's sub-agents, by their names under ``agents:``; none: every one there."""

    _kind = field_validator("kind")(classmethod(lambda cls, v: _known_kind(v)))


class SubAgentSettings(_Strict):
    """A named sub-agent a delegate may hand tasks to (``agents:``)."""

    description: str
    """What it is for: the manager reads this to choose it."""
    kind: str = "loop"
    _kind = field_validator("kind")(classmethod(lambda cls, v: _known_kind(v)))
    allowlist: list[str] | None = None
    """Its tools, from the delegate's own; none: all of them."""
    system_prompt: str | None = None
    model: str | None = None
    max_turns: int | None = Field(None, ge=1, le=100)
    token_budget: int | None = Field(None, ge=1)
    time_budget_s: float | None = Field(None, gt=0)


class RaySettings(_Strict):
    address: str | None = None
    """An existing Ray cluster (``ray://host:10001`` or ``auto``); none: Lar starts a local
    instance for the run and stops it after."""
