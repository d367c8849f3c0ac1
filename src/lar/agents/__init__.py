"""The agent core (A1–A5): ``Agent``, ``Runner``, ``Session``, the loop, its policies and tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lar._lazy import lazy_exports

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "Agent",
    "Runner",
    "Session",
    "TaskStore",
    "SHARES",
    "PolicyRegistry",
    "JobRunner",
    "IdleMode",
    "gather_tools",
    "Toolset",
    "AgentKind",
    "AgentKindRegistry",
    "read_requests",
    "batch_done",
    "ResultLog",
    "run_local",
    "run_ray",
    "throughput",
    "pasted",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DEFAULT_SYSTEM_PROMPT": "lar.agents.request",
        "Agent": "lar.agents.agent",
        "Runner": "lar.agents.runner",
        "Session": "lar.agents.session",
        "TaskStore": "lar.agents.state",
        "SHARES": "lar.agents.context",
        "PolicyRegistry": "lar.agents.policy",
        "JobRunner": "lar.agents.scheduled",
        "IdleMode": "lar.agents.idle",
        "gather_tools": "lar.agents.toolset",
        "Toolset": "lar.agents.toolset",
        "AgentKind": "lar.agents.kinds",
        "AgentKindRegistry": "lar.agents.kinds",
        "read_requests": "lar.agents.batch",
        "batch_done": "lar.agents.batch:finished",
        "ResultLog": "lar.agents.batch",
        "run_local": "lar.agents.batch",
        "run_ray": "lar.agents.batch",
        "throughput": "lar.agents.batch",
        "pasted": "lar.agents.answers",
    },
)

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.answers import pasted
    from lar.agents.batch import ResultLog, read_requests, run_local, run_ray, throughput
    from lar.agents.batch import finished as batch_done
    from lar.agents.context import SHARES
    from lar.agents.idle import IdleMode
    from lar.agents.kinds import AgentKind, AgentKindRegistry
    from lar.agents.policy import PolicyRegistry
    from lar.agents.request import DEFAULT_SYSTEM_PROMPT
    from lar.agents.runner import Runner
    from lar.agents.scheduled import JobRunner
    from lar.agents.session import Session
    from lar.agents.state import TaskStore
    from lar.agents.toolset import Toolset, gather_tools
