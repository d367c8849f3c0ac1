"""Named policies: the help a model gets, as pieces the loop calls at fixed points (A2, T5).

The loop knows no small-model trick. At four hooks it hands the run's typed state to the
policies of the model's profile, in order, and acts on the first verdict that is not ``ACCEPT``:

``reply``    after a model reply is parsed (its calls are resolved against the listed tools)
``calls``    before the reply's calls run (first calls are judged here)
``results``  after the calls ran
``answer``   before a reply without calls becomes the final answer

A verdict is data: ``Retry`` (ask again this turn with a message added for that turn only),
``WithholdTools`` (the next turn asks for the answer without tools), ``DropCalls`` (these calls
do not run, with the reason; ``then`` says what happens when none is left), ``AddCalls``,
``Finish`` (this text is the answer). Each verdict other than ``ACCEPT`` reaches the event stream
as a ``Notice`` with the policy's name and its numbers (similarities, thresholds …), so every
refusal or correction can be counted. ``lar eval --ablate NAME`` measures what one policy adds.

A policy that needs the model (asking it once whether a call fits, or for the calls a request
still needs) uses ``Turn.ask``: the same engine, metered and counted like any model call, and
skipped when the question would not fit the context window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from lar.errors import ConfigError
from lar.registry import Registry
from lar.types import Code, Message, ModelResponse, Notice, ToolCall, ToolResult, Usage

if TYPE_CHECKING:
    from lar.calling.relevance import OffTopic, Relevance
    from lar.tools.base import Tool

__all__ = [
    "Hook",
    "Accept",
    "ACCEPT",
    "Retry",
    "WithholdTools",
    "DropCalls",
    "AddCalls",
    "Finish",
    "Verdict",
    "RunState",
    "Turn",
    "Policy",
    "PolicyRegistry",
    "PolicyError",
    "builtin",
    "resolve_policies",
]

Hook = Literal["reply", "calls", "results", "answer"]
Track = Literal["native", "protocol", "constrained"]


@dataclass(frozen=True, slots=True)
class Accept:
    """Go on as if the policy were not there."""


ACCEPT = Accept()


@dataclass(frozen=True, slots=True)
class _Said:
    code: Code
    message: str
    numbers: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Retry(_Said):
    """Ask the model again this turn; ``nudge`` is added to the request for that turn only."""

    nudge: str = ""


@dataclass(frozen=True, slots=True)
class WithholdTools(_Said):
    """The next turn lists no tools and asks for the answer."""


@dataclass(frozen=True, slots=True)
class DropCalls(_Said):
    """These calls do not run. When none is left, ``then`` decides the next turn (None: the
    reply is taken as having no calls)."""

    calls: tuple[ToolCall, ...] = ()
    then: Retry | WithholdTools | None = None


@dataclass(frozen=True, slots=True)
class AddCalls(_Said):
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ChangeCalls(_Said):
    """The turn's calls become ``calls``: the same calls with arguments changed, or a call
    replaced by the one it stood for (a skill opened again → the command its guide shows)."""

    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class Finish(_Said):
    """End the run with ``answer``; ``reason`` is the final event's stop reason."""

    answer: str = ""
    reason: Literal["answer", "loop"] = "answer"


Verdict = Accept | Retry | WithholdTools | DropCalls | AddCalls | ChangeCalls | Finish


def notice(policy: str, verdict: _Said) -> Notice:
    return Notice(verdict.code, verdict.message, policy=policy, numbers=dict(verdict.numbers))


@dataclass(slots=True)
class RunState:
    """What one run has done so far (typed; tools never see it)."""

    run_id: str
    max_turns: int
    turn: int = 0
    answer_mode: bool = False
    """This turn lists no tools and asks for the answer."""
    usage: Usage = field(default_factory=Usage)
    completed: dict[str, ToolResult] = field(default_factory=dict)
    """Call hash → result, for the calls run in this run."""
    fired: Counter[str] = field(default_factory=Counter)
    """How often each policy gave a verdict other than ACCEPT."""
    nudge: str = ""
    """Added to the next request only."""

    @property
    def last_turn(self) -> bool:
        return self.turn >= self.max_turns


@dataclass(slots=True)
class Turn:
    """What the policies see at a hook: the run, this turn's reply and its calls."""

    run: RunState
    track: Track
    tools: Mapping[str, Tool]
    history: Sequence[Message]
    """The conversation so far (this turn's reply not yet in it)."""
    request: list[Message] = field(default_factory=list)
    """What the model was sent this turn."""
    response: ModelResponse | None = None
    text: str = ""
    """The reply's text without its calls (the answer, at the ``answer`` hook)."""
    calls: list[ToolCall] = field(default_factory=list)
    """The calls to run (resolved, coerced, de-duplicated)."""
    invented: list[ToolCall] = field(default_factory=list)
    """Calls naming no listed tool (never run)."""
    results: list[ToolResult] = field(default_factory=list)
    """At the ``results`` hook: what this turn's calls returned."""
    memory: str = ""
    """What memory added to the system prompt (a source of grounded values)."""
    recalled: list[str] = field(default_factory=list)
    """The memories recalled for this request, as the prompt shows them."""
    relevance: Relevance | None = None
    held: Mapping[str, Tool] = field(default_factory=dict)
    """Tools the request's listing left out (``Tool.offered``): they run when called by name."""
    workspace: Path | None = None
    """The run's workspace (files a request names are looked up there)."""
    key: Callable[[ToolCall], str] = str
    """Identifies a call by name and arguments."""
    asker: Callable[[list[Message], str], Awaitable[ModelResponse | None]] | None = None
    """What ``ask`` calls, with the asking policy's name; None: asking is not possible."""
    consulting: str = ""
    """The policy whose hook runs now."""
    _judged: dict[tuple[str, ...], list[OffTopic | None]] = field(default_factory=dict)
    _english: bool | None = None

    def english(self) -> bool:
        """Whether the newest request is in the embedder's language (English), where a low
        similarity is evidence; worked out once per turn."""
        if self._english is None:
            from lar.calling.relevance import in_embedder_language

            self._english = in_embedder_language(next(iter(self.requests(1)), ""))
        return self._english

    def judged(self) -> list[OffTopic | None]:
        """The relevance check's verdict on each call (None: it fits), worked out once for a
        set of calls however many policies ask. Needs ``relevance``."""
        assert self.relevance is not None
        key = tuple(self.key(c) for c in self.calls)
        if key not in self._judged:
            calls = [(self.tools[c.name], c.arguments) for c in self.calls]
            self._judged[key] = self.relevance.judge(self.requests(), calls, self.grounding())
        return self._judged[key]

    async def ask(self, messages: list[Message]) -> ModelResponse | None:
        """Ask the model (metered and counted, in the name of the policy consulted); None when
        asking is not possible here, it failed or it would not fit the context window."""
        if self.asker is None:
            return None
        return await self.asker(messages, self.consulting)

    def requests(self, n: int = 2) -> list[str]:
        """The user's last ``n`` messages, newest first."""
        return [m.content for m in reversed(self.history) if m.role == "user"][:n]

    def grounding(self) -> str:
        """Where a call's values may come from: the conversation and what memory added."""
        return "\n".join([*(m.content for m in self.history if m.content), self.memory])

    def times(self, policy: str) -> int:
        return self.run.fired[policy]


class Policy:
    """One named piece of help. Subclasses override the hooks they use."""

    name: ClassVar[str]
    tracks: ClassVar[frozenset[str]] = frozenset({"native", "protocol", "constrained"})
    about: ClassVar[str] = ""
    """One line for ``lar eval --ablate`` and the docs."""

    def fired(self, turn: Turn) -> bool:
        """Whether this policy already gave a verdict in this run (most speak once)."""
        return turn.times(self.name) > 0

    def may_correct(self, turn: Turn) -> bool:
        """Whether a once-only correction of the answer can still be asked for: not on the
        last turn, not when the answer is already asked for without tools, not a second time."""
        return not (turn.run.last_turn or turn.run.answer_mode or self.fired(turn))

    async def on_reply(self, turn: Turn) -> Verdict:
        return ACCEPT

    async def before_calls(self, turn: Turn) -> Verdict:
        return ACCEPT

    async def after_results(self, turn: Turn) -> Verdict:
        return ACCEPT

    async def before_answer(self, turn: Turn) -> Verdict:
        return ACCEPT


class PolicyRegistry(Registry[type[Policy]]):
    """Policies by name: Lar's own (lar.agents.policies, registered on first use) and any a
    plugin adds."""

    kind: ClassVar[str] = "policy"

    @classmethod
    def get(cls, key: str) -> type[Policy]:
        _builtins()
        return super().get(key)

    @classmethod
    def keys(cls) -> list[str]:
        _builtins()
        return super().keys()


def builtin(cls: type[Policy]) -> type[Policy]:
    """Registers one of Lar's own policies (once: a module may be imported again)."""
    if not PolicyRegistry.contains(cls.name):
        PolicyRegistry.add(cls.name, cls)
    return cls


def _builtins() -> None:
    import lar.agents.policies  # noqa: F401 - registers Lar's policies


class PolicyError(ConfigError):
    """A profile or setting names a policy that does not exist."""


def resolve_policies(
    profile: Sequence[str] | None,
    setting: Sequence[str] | None,
    track: str,
    *,
    default: Sequence[str],
    where: str = "policies",
) -> list[Policy]:
    """The policies a run uses, in order.

    ``profile`` is the model's (its catalog entry; None: ``default``). ``setting`` (an agent's
    or the config's) replaces it when it names policies, and edits it when every entry starts
    with ``-`` or ``+`` (``["-more_calls"]``: the profile without it). Policies that do not
    apply to ``track`` are left out."""
    names = list(default if profile is None else profile)
    if setting is not None:
        edits = [s for s in setting if s[:1] in "+-"]
        if edits and len(edits) != len(setting):
            raise PolicyError(f"{where}: mix of names and +/- edits: {list(setting)}")
        if not edits:
            names = list(setting)
        for edit in edits:
            name = edit[1:]
            if edit[0] == "-":
                names = [n for n in names if n != name]
            elif name not in names:
                names.append(name)
        _check([e.lstrip("+-") for e in setting], where)
    _check(names, where)
    out = []
    for name in dict.fromkeys(names):
        cls = PolicyRegistry.get(name)
        if track in cls.tracks:
            out.append(cls())
    return out


def _check(names: Sequence[str], where: str) -> None:
    known = PolicyRegistry.keys()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise PolicyError(
            f"{where}: unknown polic{'ies' if len(unknown) > 1 else 'y'} "
            f"{', '.join(map(repr, unknown))}; known: {', '.join(known)}"
        )


_METHODS = {
    "reply": "on_reply",
    "calls": "before_calls",
    "results": "after_results",
    "answer": "before_answer",
}


async def apply(hook: Hook, policies: Sequence[Policy], turn: Turn) -> tuple[Verdict, list[Any]]:
    """Run ``hook`` of each policy in order; ``DropCalls`` that leaves calls, ``AddCalls`` and
    ``ChangeCalls`` change ``turn.calls`` and go on, any other verdict stops. Returns the
    deciding verdict and the notices to show."""
    said: list[Any] = []
    for policy in policies:
        turn.consulting = policy.name
        verdict = await getattr(policy, _METHODS[hook])(turn)
        if isinstance(verdict, Accept):
            continue
        turn.run.fired[policy.name] += 1
        said.append(notice(policy.name, verdict))
        if isinstance(verdict, AddCalls):
            turn.calls = [*turn.calls, *verdict.calls]
            continue
        if isinstance(verdict, ChangeCalls):
            turn.calls = list(verdict.calls)
            continue
        if isinstance(verdict, DropCalls):
            gone = {id(c) for c in verdict.calls}
            turn.calls = [c for c in turn.calls if id(c) not in gone]
            if turn.calls or verdict.then is None:
                continue
            return verdict.then, said
        return verdict, said
    return ACCEPT, said
