"""Fixtures shared by the tool tests."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest


@dataclass
class Listener:
    """A TCP port on 127.0.0.1 that records every connection it accepts (within ``wait_s``)."""

    port: int
    accepted: list[object] = field(default_factory=list)


@pytest.fixture
def loopback_listener() -> Iterator[Listener]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(5)
    listener = Listener(server.getsockname()[1])

    def accept() -> None:
        try:
            listener.accepted.append(server.accept())
        except OSError:
            pass

    waiter = threading.Thread(target=accept)
    waiter.start()
    try:
        yield listener
    finally:
        server.close()
        waiter.join(10)
