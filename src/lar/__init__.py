"""Lar: a local-first personal AI agent.

    from lar import Agent, tool

    @tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    Agent(tools=[add]).run("What is 1234 + 4321?").text

Names are imported on first use so that ``import lar`` (and ``lar --version``) stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Runner",
    "Session",
    "RunResult",
    "tool",
    "Tool",
    "ToolContext",
    "Message",
    "ToolCall",
    "ToolResult",
    "ModelResponse",
    "Event",
    "LarConfig",
    "load_config",
    "LarError",
    "ConfigError",
    "EngineError",
    "ScriptedEngine",
    "OpenAIEngine",
    "LlamaCppEngine",
    "FailoverEngine",
    "builtin_tools",
    "__version__",
]

_LAZY = {
    "Agent": "lar.agents.agent",
    "Runner": "lar.agents.runner",
    "Session": "lar.agents.session",
    "RunResult": "lar.agents.results",
    "tool": "lar.tools.base",
    "Tool": "lar.tools.base",
    "ToolContext": "lar.tools.base",
    "Message": "lar.types",
    "ToolCall": "lar.types",
    "ToolResult": "lar.types",
    "ModelResponse": "lar.types",
    "Event": "lar.types",
    "LarConfig": "lar.config",
    "load_config": "lar.config",
    "LarError": "lar.errors",
    "ConfigError": "lar.errors",
    "EngineError": "lar.errors",
    "ScriptedEngine": "lar.engines.scripted",
    "OpenAIEngine": "lar.engines.openai_http",
    "LlamaCppEngine": "lar.engines.llamacpp",
    "FailoverEngine": "lar.engines.failover",
    "builtin_tools": "lar.tools.builtin",
}

if TYPE_CHECKING:
    from lar.agents.agent import Agent
    from lar.agents.results import RunResult
    from lar.agents.runner import Runner
    from lar.agents.session import Session
    from lar.config import LarConfig, load_config
    from lar.engines.failover import FailoverEngine
    from lar.engines.llamacpp import LlamaCppEngine
    from lar.engines.openai_http import OpenAIEngine
    from lar.engines.scripted import ScriptedEngine
    from lar.errors import ConfigError, EngineError, LarError
    from lar.tools.base import Tool, ToolContext, tool
    from lar.tools.builtin import builtin_tools
    from lar.types import Event, Message, ModelResponse, ToolCall, ToolResult


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lar' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
