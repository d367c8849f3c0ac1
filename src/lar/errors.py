"""Lar's exception family for real failures (signals to the model are data, not exceptions)."""

from __future__ import annotations

__all__ = [
    "LarError",
    "ConfigError",
    "EngineError",
    "ModelNotInstalled",
    "ToolDefinitionError",
    "RunInterrupted",
]


class LarError(Exception):
    """Base class; the CLI prints these as one clear line instead of a traceback."""


class ConfigError(LarError):
    def __init__(self, message: str, *, file: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.key = key


class EngineError(LarError):
    """An inference call failed. ``retryable`` is true for network errors, timeouts, 5xx and 429."""

    def __init__(
        self, engine: str, message: str, *, status: int | None = None, retryable: bool = False
    ) -> None:
        super().__init__(f"{engine}: {message}")
        self.engine = engine
        self.status = status
        self.retryable = retryable


class ModelNotInstalled(LarError):
    pass


class ToolDefinitionError(LarError):
    pass


class RunInterrupted(LarError):
    """A run stopped by ``Agent.interrupt()`` (Ctrl-C, SIGTERM); its task can be resumed."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"interrupted; continue with `lar resume {task_id}`")
        self.task_id = task_id
