"""End-to-end fixtures: the real embedded model, assembled once per test session."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from lar.engines.default_model import DEFAULT_MODEL, ensure_model

_HAVE_MODEL = all(importlib.util.find_spec(p.package) for p in DEFAULT_MODEL.parts)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
            if not _HAVE_MODEL:
                if os.environ.get("CI"):
                    raise pytest.UsageError("CI must run the e2e tests: pip install '.[model]'")
                item.add_marker(
                    pytest.mark.skip(reason="the default model's data packages are not installed")
                )


@pytest.fixture(scope="session")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("e2e-home")
    ensure_model(home / "models")
    return home


@pytest.fixture
def lar_home(model_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home per test (memory, tasks) that shares the session's assembled model."""
    home = tmp_path / "lar-home"
    home.mkdir()
    (home / "models").symlink_to(model_home / "models", target_is_directory=True)
    monkeypatch.setenv("LAR_HOME", str(home))
    return home
