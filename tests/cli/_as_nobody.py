"""Run ``lar ARGS`` as uid 65534 (for the permission tests, which root would pass anyway).

The command runs once as root on an empty home first, so every module it imports is loaded
before the interpreter's own files (possibly under /root) become unreadable.
"""

from __future__ import annotations

import os
import sys
import tempfile

import lar.agents.agent  # noqa: F401 - what `lar run` imports lazily
import lar.tools.builtin  # noqa: F401
import lar.tools.discovery  # noqa: F401
from lar.cli.main import app, entry

args = sys.argv[1:]
home = os.environ["LAR_HOME"]
with tempfile.TemporaryDirectory() as warm:
    os.environ["LAR_HOME"] = warm
    try:
        app([*args, "--help"] if args[0] == "run" else args, standalone_mode=False)
    except BaseException:  # noqa: BLE001, S110 - only warming the imports
        pass
os.environ["LAR_HOME"] = home
os.setgid(65534)
os.setuid(65534)
sys.argv = ["lar", *args]
entry()
