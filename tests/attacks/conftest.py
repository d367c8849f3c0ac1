"""The attack suite reuses the server's fixtures (a server on a scripted engine)."""

from tests.server.conftest import make_client  # noqa: F401 - a fixture, found by name
