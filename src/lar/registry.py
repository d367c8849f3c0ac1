"""Generic registries (R1) and entry-point plugins (R2).

Each ``Registry`` subclass owns its own table, so ``EngineRegistry`` and ``ToolRegistry`` never
see each other's keys::

    class EngineRegistry(Registry[type[Engine]]): ...

    @EngineRegistry.register("openai")
    class OpenAIEngine(Engine): ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from lar.errors import LarError

__all__ = ["Registry", "RegistryError", "PluginError", "load_plugins"]

T = TypeVar("T")
PLUGIN_GROUP = "lar.plugins"


class RegistryError(LarError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class PluginError(LarError):
    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"plugin {plugin!r}: {message}")
        self.plugin = plugin


class Registry(Generic[T]):
    """A named table of components. Subclass it once per kind of component."""

    kind: ClassVar[str] = "component"
    _entries: ClassVar[dict[str, Any]]
    _kinds: ClassVar[list[type[Registry[Any]]]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._entries = {}
        Registry._kinds.append(cls)

    @staticmethod
    def keys_of(kind: str) -> list[str]:
        """Every key registered for ``kind`` (e.g. ``"engine"``), whichever subclass holds it:
        lower layers (the config) can check names without importing the components' package."""
        return sorted({k for r in Registry._kinds if r.kind == kind for k in r._entries})

    @classmethod
    def register(cls, key: str) -> Callable[[T], T]:
        def decorator(item: T) -> T:
            cls.add(key, item)
            return item

        return decorator

    @classmethod
    def add(cls, key: str, item: T) -> None:
        if key in cls._entries:
            raise RegistryError(f"{cls.kind} {key!r} is already registered")
        cls._entries[key] = item

    @classmethod
    def get(cls, key: str) -> T:
        try:
            item: T = cls._entries[key]
        except KeyError:
            known = ", ".join(sorted(cls._entries)) or "none"
            raise RegistryError(f"unknown {cls.kind} {key!r}; known: {known}") from None
        return item

    @classmethod
    def contains(cls, key: str) -> bool:
        return key in cls._entries

    @classmethod
    def keys(cls) -> list[str]:
        return sorted(cls._entries)

    @classmethod
    def remove(cls, key: str) -> None:
        cls._entries.pop(key, None)


def load_plugins(group: str = PLUGIN_GROUP) -> list[str]:
    """Import every installed plugin; each registers its components when loaded.

    A plugin whose optional dependency is missing raises ``PluginError`` naming the plugin and the
    missing module instead of silently dropping the component.
    """
    loaded: list[str] = []
    import importlib.metadata  # only when plugins are loaded: it costs ~30 ms to import

    for entry in importlib.metadata.entry_points(group=group):
        try:
            target = entry.load()
        except ModuleNotFoundError as exc:
            raise PluginError(
                entry.name,
                f"needs the module {exc.name!r}, which is not installed "
                f"(pip install {exc.name or '<package>'})",
            ) from exc
        if callable(target):
            target()
        loaded.append(entry.name)
    return loaded
