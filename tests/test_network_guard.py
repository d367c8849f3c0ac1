import socket

import pytest


def test_non_loopback_connections_fail_in_tests() -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(RuntimeError, match="only talk to loopback"):
            s.connect(("192.0.2.1", 80))  # TEST-NET-1: never routed
    finally:
        s.close()


def test_loopback_connections_are_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket()
    try:
        client.connect(server.getsockname())
    finally:
        client.close()
        server.close()
