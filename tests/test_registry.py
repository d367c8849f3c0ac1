import importlib.metadata
from typing import Any

import pytest

from lar.registry import PluginError, Registry, RegistryError, load_plugins


class Fruits(Registry[str]):
    kind = "fruit"


class Tools(Registry[str]):
    kind = "tool"


def teardown_function() -> None:
    for key in Fruits.keys():
        Fruits.remove(key)
    for key in Tools.keys():
        Tools.remove(key)


def test_each_registry_has_its_own_table() -> None:
    Fruits.add("apple", "A")
    assert Fruits.get("apple") == "A"
    assert not Tools.contains("apple")


def test_decorator_registers() -> None:
    @Fruits.register("pear")
    def pear() -> str:
        return "P"

    assert Fruits.get("pear") is pear


def test_duplicate_key_is_an_error() -> None:
    Fruits.add("apple", "A")
    with pytest.raises(RegistryError, match="fruit 'apple' is already registered"):
        Fruits.add("apple", "B")


def test_unknown_key_lists_known_keys() -> None:
    Fruits.add("apple", "A")
    Fruits.add("kiwi", "K")
    with pytest.raises(RegistryError) as info:
        Fruits.get("plum")
    assert str(info.value) == "unknown fruit 'plum'; known: apple, kiwi"


class _EP:
    def __init__(self, name: str, target: Any = None, missing: str | None = None) -> None:
        self.name = name
        self.target = target
        self.missing = missing

    def load(self) -> Any:
        if self.missing:
            raise ModuleNotFoundError(f"No module named {self.missing!r}", name=self.missing)
        return self.target


def test_plugins_load_and_register(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group: [_EP("fruity", lambda: Fruits.add("mango", "M"))],
    )
    assert load_plugins() == ["fruity"]
    assert Fruits.get("mango") == "M"


def test_plugin_with_missing_dependency_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        importlib.metadata, "entry_points", lambda group: [_EP("voice", missing="whisperx")]
    )
    with pytest.raises(PluginError, match="plugin 'voice': needs the module 'whisperx'"):
        load_plugins()
