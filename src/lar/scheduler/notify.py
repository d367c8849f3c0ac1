"""Where a fired job is announced besides the inbox: a desktop notification, a webhook.

A notifier that fails never loses the job's result (the inbox has it already) and never stops the
scheduler: the failure is kept in ``Notifier.failures`` for ``lar schedule run`` to show.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from typing import Protocol

from lar.config import NotifierSettings

__all__ = ["Notifier", "Desktop", "Webhook", "notifiers_from"]


class Notifier(Protocol):
    failures: list[str]

    def send(self, title: str, body: str) -> None: ...


class Desktop:
    """``notify-send`` (freedesktop notifications) where the machine has it; else nothing."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.program = shutil.which("notify-send")

    def send(self, title: str, body: str) -> None:
        if self.program is None:
            return
        try:
            subprocess.run(
                [self.program, "--app-name=Lar", title, body[:500]],
                check=True,
                timeout=10,
                capture_output=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.failures.append(f"desktop notification: {exc}")


class Webhook:
    """POSTs ``{"title", "body"}`` as JSON to ``url`` with ``headers`` (secrets from ``${ENV}``
    in the config; never logged)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.failures: list[str] = []
        self.url = url
        self.headers = dict(headers or {})

    def send(self, title: str, body: str) -> None:
        import httpx

        try:
            response = httpx.post(
                self.url, json={"title": title, "body": body}, headers=self.headers, timeout=10
            )
            response.raise_for_status()
        except httpx.HTTPError as exc:
            self.failures.append(f"webhook {self.url}: {type(exc).__name__}: {exc}")


def notifiers_from(settings: Sequence[NotifierSettings]) -> list[Notifier]:
    """The configured notifiers (``scheduler.notify``)."""
    found: list[Notifier] = []
    for entry in settings:
        if entry.kind == "desktop":
            found.append(Desktop())
        elif entry.url:
            headers = {k: v.get_secret_value() for k, v in entry.headers.items()}
            found.append(Webhook(entry.url, headers))
    return found
