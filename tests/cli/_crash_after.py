"""`python _crash_after.py N ARGS…` runs `lar ARGS…` and SIGKILLs it right after the N-th
recorded task step (a checkpoint, a call started or done, a status change before the end): crash
injection for the resume tests lives here, not in shipped code."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from lar.agents import state


def _install(limit: int) -> None:
    steps = 0

    def counted(method: Any, counts: Any = lambda *a, **k: True) -> Any:
        def wrapper(self: state.TaskRecorder, *args: Any, **kwargs: Any) -> Any:
            nonlocal steps
            result = method(self, *args, **kwargs)
            if counts(*args, **kwargs):
                steps += 1
                if steps == limit:
                    os.kill(os.getpid(), signal.SIGKILL)
            return result

        return wrapper

    recorder = state.TaskRecorder
    recorder.checkpoint = counted(recorder.checkpoint)  # type: ignore[method-assign]
    recorder.call_started = counted(recorder.call_started)  # type: ignore[method-assign]
    recorder.call_done = counted(recorder.call_done)  # type: ignore[method-assign]
    recorder.status = counted(  # type: ignore[method-assign]
        recorder.status, lambda status, **_: status not in state._FINAL
    )


if __name__ == "__main__":
    _install(int(sys.argv[1]))
    from lar.cli.main import entry

    sys.argv = ["lar", *sys.argv[2:]]
    entry()
