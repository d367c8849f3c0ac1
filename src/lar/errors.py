"""Lar's exception family for real failures (signals to the model are data, not exceptions)."""

from __future__ import annotations

from typing import Any

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
        self.message = message
        self.status = status
        self.retryable = retryable

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (a Ray worker's engine error reaches the driver as itself)."""
        return (_engine_error, (self.engine, self.message, self.status, self.retryable))


def _engine_error(engine: str, message: str, status: int | None, retryable: bool) -> EngineError:
    return EngineError(engine, message, status=status, retryable=retryable)


class ModelNotInstalled(LarError):
    pass


class ToolDefinitionError(LarError):
    pass


class RunInterrupted(LarError):
    """A run stopped by ``Agent.interrupt()`` (Ctrl-C, SIGTERM); its task can be resumed."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"interrupted; continue with `lar resume {task_id}`")
        self.task_id = task_id
