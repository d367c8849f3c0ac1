"""The agent a command runs: built from the config, its tools and the model, with progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from lar.cli.render import exit_code, model_progress, print_error
from lar.cli.toolset import agent_tools
from lar.errors import LarError

__all__ = ["make_agent", "make_agent_or_exit"]


def make_agent(
    *,
    model: str | None,
    track: str | None,
    workspace: Path | None,
    max_turns: int | None,
    approver: Any,
    ask_user: Any,
    quiet: bool,
    memory: bool = True,
    kind: str | None = None,
) -> Any:
    from lar.agents import Agent, TaskStore
    from lar.config import load_config
    from lar.redact import Redactor
    from lar.registry import load_plugins

    load_plugins()  # before the config: plugins may add engine kinds and tools
    config = load_config()
    if track not in (None, "auto", "native", "protocol", "constrained"):
        raise LarError(f"--track must be auto, native, protocol or constrained (got {track!r})")
    tools = agent_tools(config)
    with model_progress(quiet) as progress:
        agent = Agent(
            tools=tools,
            model=model,
            config=config,
            track=track,  # type: ignore[arg-type]
            workspace=workspace,
            max_turns=max_turns,
            approver=approver,
            ask_user=ask_user,
            on_model_progress=progress,
            tasks=TaskStore(config.home / "lar.db", redact=Redactor(config.secrets()).text),
            memory=memory,
            kind=kind,
        )
        agent.session().engine  # noqa: B018 - build the model now: its errors and progress belong here
    return agent


def make_agent_or_exit(
    *,
    model: str | None,
    track: str | None = None,
    approver: Any = None,
    quiet: bool = False,
    memory: bool = True,
) -> Any:
    """An agent for a command that only needs the model and memory; a bad config exits 2."""
    try:
        return make_agent(
            model=model,
            track=track,
            workspace=None,
            max_turns=None,
            approver=approver,
            ask_user=None,
            quiet=quiet,
            memory=memory,
        )
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None
