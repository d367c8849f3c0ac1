"""Shared fixtures: an isolated LAR_HOME per test and a guard that fails any non-loopback call."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check(address: Any) -> None:
    if not isinstance(address, tuple):  # AF_UNIX paths are local
        return
    host = address[0]
    if host == "localhost":
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    raise RuntimeError(f"test tried to reach {host!r}: tests may only talk to loopback")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)


@pytest.fixture(autouse=True)
def lar_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "lar-home"
    home.mkdir()
    monkeypatch.setenv("LAR_HOME", str(home))
    yield home


@pytest.fixture(autouse=True)
def _off_topic_check(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scripted engines call whatever tool a test names, whatever its request says, and the
    off-topic check (lar.calling.relevance) would refuse many of those calls. It is on only in
    tests marked ``off_topic`` (its own tests, and the e2e tests on the real model)."""
    if request.node.get_closest_marker("off_topic") or "e2e" in request.node.nodeid.split("/"):
        return
    from lar.agents.runner import Runner

    monkeypatch.setattr(Runner, "relevance", lambda self: None)
