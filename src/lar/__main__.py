"""``python -m lar`` is the ``lar`` command."""

from lar.cli.main import entry

entry()
