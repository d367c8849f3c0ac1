"""The policies about edits: a replacement that would delete words the user never named is
asked about once before it runs; a replacement of one file's name by another's, with nothing
to replace, runs as the rename it stands for; a call the user did not allow ends the run with
Lar's account of it (lar.agents.policies registers the rest).

Asked to add an item to a list, the 1.5B replaced the list's only line with the new one (a
``file_patch`` from the old line to the new): nothing failed, the permission was given, and the
user's line was gone. What a replacement deletes is plain to code (the words of its old
text that its new text lacks); whether the user asked for that is not, so the check compares
those words with the user's own words in any language and, when some were never named, asks
the model once with the words shown, when a turn is left to run the mended call. A repeated
call then runs: the user may mean it, and the permission still guards the edit.
"""

from __future__ import annotations

import json
import os
import re
from typing import ClassVar

from lar.agents.policy import (
    ACCEPT,
    ChangeCalls,
    Finish,
    Policy,
    Retry,
    Turn,
    Verdict,
    builtin,
)
from lar.tools.executor import NOT_ALLOWED_BY_USER
from lar.types import Code, ToolCall

__all__ = ["LostText", "PatchedRename", "RefusedCall", "deleted_words"]

_WORD = re.compile(r"\w+", re.UNICODE)
_FILE_NAME = re.compile(r"[^\s\"'<>|*?]+\.[^\W\d_]\w{0,7}")


def deleted_words(old: str, new: str) -> list[str]:
    """The words of ``old`` that ``new`` does not hold (case-insensitive), in order, once each."""
    kept = new.casefold()
    out: list[str] = []
    for word in _WORD.findall(old.casefold()):
        if word not in kept and word not in out:
            out.append(word)
    return out


@builtin
class LostText(Policy):
    name: ClassVar[str] = "lost_text"
    about: ClassVar[str] = (
        "a replacement that would delete words the user never named (an 'add' that replaced "
        "the line it was added to): asked once, with the words, before it runs"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        if not self.may_correct(turn) or turn.run.turn + 2 > turn.run.max_turns:
            return ACCEPT  # no turn left to run the mended call: it runs as it is
        said = "\n".join(turn.requests()).casefold()
        for call in turn.calls:
            lost = self._lost(turn, call, said)
            if lost:
                return self._ask(turn, call, lost)
        return ACCEPT

    @staticmethod
    def _lost(turn: Turn, call: ToolCall, said: str) -> list[str]:
        tool = turn.tools.get(call.name)
        if tool is None or tool.replaces is None:
            return []
        old, new = (call.arguments.get(k) for k in tool.replaces)
        if not isinstance(old, str) or not isinstance(new, str):
            return []
        return [w for w in deleted_words(old, new) if w not in said]

    @staticmethod
    def _ask(turn: Turn, call: ToolCall, lost: list[str]) -> Retry:
        old_key, new_key = turn.tools[call.name].replaces or ("old", "new")
        old, new = (str(call.arguments[k]) for k in (old_key, new_key))
        shown = ", ".join(repr(w) for w in lost[:6])
        where = call.arguments.get("path")
        place = f" from {where}" if isinstance(where, str) else ""
        kept = json.dumps(old.rstrip("\n") + "\n" + new, ensure_ascii=False)
        return Retry(
            Code.LOST_TEXT,
            f"{call.name} would delete words the request never named: {shown}",
            numbers={"deleted_words": len(lost)},
            nudge=(
                f"That {call.name} call would delete {shown}{place}: what is in {old_key} and "
                f"not in {new_key} is removed, and my request did not ask for that. To keep it, "
                f"{new_key} must hold it too, e.g. {new_key}={kept}. If deleting it is what I "
                "asked, reply with the same call again."
            ),
        )


@builtin
class PatchedRename(Policy):
    """Asked to rename a file, the 1.5B wrote ``file_patch(old="ideas.txt", new="plans.md")``
    with no ``path`` (or with the old name as the path) even with ``file_move`` listed: a call
    that fails, or replaces nothing. Only such a call — its ``old`` a file in the workspace,
    its ``new`` a file name that is free, and no text of that file to replace — is the rename
    it stands for, run as ``file_move`` under ``file_move``'s own permission."""

    name: ClassVar[str] = "patched_rename"
    about: ClassVar[str] = (
        "a text replacement from one file's name to another's, with nothing in a file to "
        "replace: the rename it stands for, run as file_move"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        mover = turn.tools.get("file_move") or turn.held.get("file_move")
        if mover is None or turn.workspace is None:
            return ACCEPT
        calls, said = [], []
        for call in turn.calls:
            moved = self._rename(turn, call)
            if moved is not None:
                said.append(f"{call.name}({moved['source']} → {moved['destination']})")
                call = ToolCall(call.id, mover.name, moved)
            calls.append(call)
        if not said:
            return ACCEPT
        return ChangeCalls(
            Code.PATCHED_RENAME, f"a rename written as a text replacement: {', '.join(said)}",
            calls=tuple(calls),
        )  # fmt: skip

    @staticmethod
    def _rename(turn: Turn, call: ToolCall) -> dict[str, str] | None:
        tool = turn.tools.get(call.name)
        if tool is None or tool.replaces is None or turn.workspace is None:
            return None
        old, new = (call.arguments.get(k) for k in tool.replaces)
        path = call.arguments.get("path") or old
        if not (isinstance(old, str) and isinstance(new, str) and path == old):
            return None
        if not (_FILE_NAME.fullmatch(old) and _FILE_NAME.fullmatch(new)) or old == new:
            return None
        try:
            source, target = turn.workspace / old, turn.workspace / new
            inside = source.resolve().is_relative_to(turn.workspace.resolve())
            if not inside or not source.is_file() or os.path.lexists(target):
                return None
            if old in source.read_text(encoding="utf-8", errors="replace"):
                return None  # the file holds its own name: a replacement could mean it
        except OSError:
            return None
        return {"source": old, "destination": new}


@builtin
class RefusedCall(Policy):
    """Without the user's yes (no ``--yes``; "no" in ``lar chat``), the 1.5B's reply after the
    refusal was where edit requests failed: steps to do it by hand, "the file has been
    renamed", or a sentence in English under a Portuguese request. Nothing the model could
    still do changes that the call did not run, so the run ends on the calls' account (what did
    not run and how to allow it, lar.agents.answers; in the request's language where
    ``agent.accounts_in_language`` is on), with no reply of the model's after the refusal."""

    name: ClassVar[str] = "refused_call"
    about: ClassVar[str] = (
        "a call the user did not allow (no --yes, a 'no' in lar chat) ends the run with Lar's "
        "account of what did not run and how to allow it, not a reply written after it"
    )

    async def after_results(self, turn: Turn) -> Verdict:
        # Only the user's no: a missing credential leaves the model to answer without the tool,
        # and a copy-run whose changes were turned down had already run (lar.tools.executor).
        refused = [
            r.name
            for r in turn.results
            if r.error is not None
            and r.error.code == Code.DENIED
            and r.error.error == NOT_ALLOWED_BY_USER
        ]
        if not refused:
            return ACCEPT
        return Finish(
            Code.REFUSED_CALL, f"not allowed: {', '.join(refused)}; the run ends on its account"
        )
