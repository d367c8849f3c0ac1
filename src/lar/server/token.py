"""The token every request to ``lar serve`` and ``lar mcp serve --http`` carries (I2, I5).

Loopback is not a boundary: every local user and process can reach 127.0.0.1. So a token is
always required. ``server.token`` in config.yaml (``${LAR_TOKEN}``) sets it; without one, Lar
makes a random one on first start in ``$LAR_HOME/server.token`` (mode 0600, readable only by
the user who runs the server) and the CLI and the panel's sign-in link read it from there.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from lar.errors import ConfigError

if TYPE_CHECKING:
    from lar.config import LarConfig

__all__ = ["server_token", "TOKEN_FILE", "MIN_TOKEN_CHARS"]

TOKEN_FILE = "server.token"
MIN_TOKEN_CHARS = 16
"""A configured token shorter than this is refused: it would be guessed."""


class TokenError(ConfigError):
    """The token is unusable as configured or stored (exit 2)."""


def server_token(config: LarConfig, *, create: bool = True) -> str | None:
    """The token of this home's server: the configured one, else the stored one (made on the
    first call when ``create``; None when there is none and ``create`` is false)."""
    if config.server.token is not None:
        value = config.server.token.get_secret_value().strip()
        if not value:
            raise TokenError(
                "server.token is empty (is LAR_TOKEN set to nothing?): set it to a long random "
                f"value, or remove server.token to use the one Lar keeps in "
                f"{config.home / TOKEN_FILE}",
                key="server.token",
            )
        if len(value) < MIN_TOKEN_CHARS:
            raise TokenError(
                f"server.token is {len(value)} characters; use at least {MIN_TOKEN_CHARS} "
                "(for example: python -c 'import secrets; print(secrets.token_urlsafe(32))')",
                key="server.token",
            )
        return value
    path = config.home / TOKEN_FILE
    if not path.exists() and not create:
        return None
    return _stored(path)


def _stored(path: Path) -> str:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return _read(path)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token + "\n")
    return token


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "r", encoding="ascii", errors="replace") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise TokenError(
                f"{path}: not a file of this user's; remove it (lar serve makes a new token)",
                file=str(path),
            )
        if info.st_mode & 0o077:
            os.fchmod(f.fileno(), 0o600)  # others could read it: close that first
        token = f.read(4096).strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise TokenError(
            f"{path}: holds no usable token; remove it (lar serve makes a new one)",
            file=str(path),
        )
    return token
