"""The request of each turn of a run: the history compressed when it has too many messages
(A3), fitted to the context window (X2–X5), the tool listing in full or as a reminder (X6)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from lar.agents.context import PER_MESSAGE, TokenCounter, compress_messages
from lar.agents.policy import RunState
from lar.agents.request import (
    Carried,
    LoopSettings,
    fit_request,
    render_history,
    system_message,
    with_nudge,
)
from lar.tools.base import Tool, ToolContext
from lar.tools.executor import offered_for
from lar.types import ContextCompressed, Event, Message

if TYPE_CHECKING:
    from lar.agents.results import PromptPreview
    from lar.agents.session import Session

__all__ = ["Prompter", "preview"]


class Prompter:
    """Builds each turn's request for one run; ``history`` is the run's own list (it grows)."""

    def __init__(
        self,
        settings: LoopSettings,
        counter: TokenCounter,
        ctx: ToolContext,
        history: list[Message],
        tools: Sequence[Tool],
        carried: Carried,
    ) -> None:
        self.settings, self.counter, self.ctx = settings, counter, ctx
        self.history, self.tools, self.carried = history, tools, carried
        self.reported: list[tuple[str, str]] = []  # the fitting events last reported
        self.squeezed = 0  # the message cut (A3) last reported

    async def request(self, run: RunState) -> AsyncIterator[Event | list[Any]]:
        """The events of fitting, then (last) the request and the listed tools.

        The parts are counted as fitting sees them; the request as sent also has the tool
        results' tags, the tail after them and a one-turn nudge. When it comes out larger
        than the window allows, it is fitted again with that difference kept free (bounded)."""
        settings = self.settings
        full = settings.full_listing(run.turn)
        base, squeezed = self.history, ""
        async for item in self.squeeze():
            if isinstance(item, ContextCompressed):
                yield item
            else:
                base, squeezed = item
        added = 0
        for _ in range(3):
            view, listed, memory, summary = base, self.tools, self.carried.memory, squeezed
            parts: dict[str, int] = {}
            fitted = None
            if settings.n_ctx:
                fitted = await fit_request(
                    settings, self.counter, self.ctx, base, self.tools, run.answer_mode,
                    run.completed, self.carried, added=added, full=full,
                )  # fmt: skip
                view, listed, memory = fitted.history, fitted.tools, fitted.memory
                summary = "; ".join(s for s in (squeezed, fitted.summary) if s)
                parts = dict(fitted.tokens)
            system = system_message(
                settings, listed, self.ctx, answer_mode=run.answer_mode, memory=memory,
                summary=summary, history=view, full=full,
            )  # fmt: skip
            request = [
                system,
                *render_history(
                    view,
                    settings.track,
                    answer_mode=run.answer_mode,
                    name_the_language=settings.name_the_language,
                ),  # fmt: skip
            ]
            if run.nudge:
                request = with_nudge(request, run.nudge)
            if not settings.n_ctx:
                break
            size = await self.size(request)
            if size + settings.reserve <= settings.n_ctx:
                break
            assert fitted is not None
            added = max(added + 1, size - sum(fitted.tokens.values()))
        run.nudge = ""
        if fitted is not None:
            self.carried.cut = fitted.cut
            now = [(e.part, e.detail) for e in fitted.events]
            if now != self.reported:  # report a change, not the same cut every turn
                for event in fitted.events:
                    yield event
                self.reported = now
        yield [request, listed, parts]

    async def squeeze(self) -> AsyncIterator[ContextCompressed | tuple[list[Message], str]]:
        """A3: the history with its older messages left out once there are too many, and
        their summary (last); an event when the cut is new."""
        squeezed = compress_messages(
            self.history, self.settings.max_messages, self.carried.message_cut
        )
        if squeezed is None:
            yield self.history, ""
            return
        self.carried.message_cut = squeezed.cut
        if squeezed.cut != self.squeezed:
            self.squeezed = squeezed.cut
            before = await self.size(self.history)
            after = await self.size(squeezed.history)
            yield ContextCompressed(
                "history", before, after,
                f"{len(self.history)} messages: {squeezed.left_out} left out, "
                f"{len(squeezed.history)} kept + a progress line",
            )  # fmt: skip
        yield squeezed.history, squeezed.summary

    async def size(self, messages: list[Message]) -> int:
        """Tokens of ``messages`` as the model gets them: each with its template tokens, and
        the reply's header."""
        counts = await self.counter.count([m.content for m in messages])
        return sum(counts) + PER_MESSAGE * (len(messages) + 1)


async def preview(
    session: Session, text: str, history: list[Message], estimate: bool
) -> PromptPreview:
    """``Session.apreview``: the first request for ``text`` as it would be sent now."""
    import dataclasses

    from lar.agents.request import with_skills_share
    from lar.agents.results import PromptPreview as Preview

    messages = [*history, Message("user", text)]
    ctx = ToolContext(
        workspace=session.workspace, home=session.runner.config.home, state=session.state
    )
    settings = session.settings
    n_ctx = settings.n_ctx or 4096
    counter = TokenCounter(None) if estimate else settings.counter or TokenCounter(session.engine)
    tools = offered_for(session.executor.visible(), text)  # as the run would list them
    fitted = await fit_request(
        dataclasses.replace(settings, n_ctx=n_ctx), counter, ctx, messages, tools, False, {},
        session.carried,
    )  # fmt: skip
    system = system_message(
        settings, fitted.tools, ctx, answer_mode=False, memory=fitted.memory,
        summary=fitted.summary,
    )  # fmt: skip
    request = [system, *render_history(fitted.history, settings.track, answer_mode=False)]
    total = sum(await counter.count([m.content for m in request])) + PER_MESSAGE * len(request)
    tokens = await with_skills_share(settings, counter, fitted.tools, fitted.tokens)
    return Preview(
        request, tokens, fitted.limits, total, n_ctx, settings.reserve, bool(counter.exact),
        fitted.events,
    )  # fmt: skip
