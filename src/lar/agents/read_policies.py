"""The policy about reading a long file whole: a read that would be cut to its first screenful
is narrowed to the lines holding a word of the request (lar.agents.policies registers the rest).

The README's demo asks "What version does pyproject.toml declare?"; the 1.5B reads the whole
file (``keyword=""``), 8 KB of which 3,200 characters are shown, about 1,200 tokens computed in
every run for the one ``version`` line. A file that long is never shown whole anyway: the lines
with the request's own words are the part most likely asked about, and the read says on how
many of the file's lines they are."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import ClassVar

from lar.agents.policy import ACCEPT, ChangeCalls, Policy, Turn, Verdict, builtin
from lar.agents.table_policies import table_shape
from lar.tools.executor import DEFAULT_CLIP_CHARS
from lar.types import Code

__all__ = ["NarrowRead", "narrowing_word"]

READER = "file_read"
_PEEK = 4 << 20
"""A file is looked at up to 4 MiB (file_read shows 400 lines at most)."""
_MIN_WORD = 3
_MAX_SHARE = 0.2
"""A word on more than a fifth of the file's lines (and more than three) narrows nothing."""
_WORD = re.compile(r"\w[\w.-]*\w|\w", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
"""Scripts written without spaces (Chinese, Japanese, Korean): no word stands alone there."""


@builtin
class NarrowRead(Policy):
    name: ClassVar[str] = "narrow_read"
    about: ClassVar[str] = (
        "a whole-file read of a workspace file too long to be shown whole (it would be cut to "
        "its first screenful): narrowed to the lines holding the request's longest word found "
        "in the file, so the part asked about is shown (tables are left to table_by_code)"
    )

    async def before_calls(self, turn: Turn) -> Verdict:
        """Once a run: a whole read asked for again after a narrowed one runs as asked (the
        model wants the rest)."""
        if turn.workspace is None or not turn.calls or self.fired(turn):
            return ACCEPT
        request = " ".join(turn.requests(1))
        changed, said = [], []
        for call in turn.calls:
            path = call.arguments.get("path")
            if call.name == READER and isinstance(path, str) and _whole(call.arguments):
                word = narrowing_word(turn.workspace, path, request)
                if word is not None:
                    said.append(f"{path} → keyword={word!r}")
                    call = dataclasses.replace(call, arguments={**call.arguments, "keyword": word})
            changed.append(call)
        if not said:
            return ACCEPT
        return ChangeCalls(
            Code.NARROW_READ,
            f"a file too long to show whole, read at the request's word: {', '.join(said)}",
            calls=tuple(changed),
        )


def _whole(arguments: dict[str, object]) -> bool:
    """A read of the whole file: no keyword, no end line, from the top."""
    keyword = arguments.get("keyword")
    if isinstance(keyword, str) and keyword.strip():
        return False
    if arguments.get("end_line") not in (None, ""):
        return False
    return arguments.get("start_line") in (None, "", 1, "1")


def narrowing_word(workspace: Path, name: str, request: str) -> str | None:
    """The request's word to read ``name`` at, or None to read it whole: the file must be a
    workspace text file whose numbered lines exceed what one result shows, and not a table;
    the word (three characters or more, not part of the file's name; in Chinese or Japanese
    any two to four characters) must stand alone on at least one line and on at most a fifth
    of them. The longest such word wins (a content word more often than "what" or "does"),
    then the rarer one."""
    path = (workspace / name).resolve()
    try:
        if not path.is_relative_to(workspace.resolve()) or not path.is_file():
            return None
        with path.open(encoding="utf-8", errors="replace") as f:
            text = f.read(_PEEK)
    except OSError:
        return None
    lines = text.lower().splitlines()
    shown = sum(len(line) + len(str(i)) + 3 for i, line in enumerate(lines, 1))
    if shown <= DEFAULT_CLIP_CHARS or table_shape(workspace, name) is not None:
        return None
    own = set(_WORD.findall(Path(name).name.lower()))
    own |= {part for word in own for part in re.split(r"[.\-_]", word)}
    cap = max(3, int(len(lines) * _MAX_SHARE))
    best: tuple[int, int, str] | None = None
    for word in _candidates(request.lower()):
        if word in own or word.isdigit():
            continue
        exact = re.escape(word)
        alone = re.compile(exact if _CJK.search(word) else rf"(?<!\w){exact}(?!\w)")
        on = sum(1 for line in lines if alone.search(line))
        if 1 <= on <= cap and (best is None or (len(word), -on) > best[:2]):
            best = (len(word), -on, word)
    return best[2] if best else None


def _candidates(request: str) -> dict[str, None]:
    """The request's words of three characters or more; in a script written without spaces,
    every run of two to four of its characters (a name is often two or three)."""
    words: dict[str, None] = {}
    for word in _WORD.findall(request):
        for run in _CJK.findall(word):
            for size in range(min(4, len(run)), 1, -1):
                words.update((run[i : i + size], None) for i in range(len(run) - size + 1))
        rest = _CJK.sub(" ", word).split()
        words.update((w.strip(".-"), None) for w in rest if len(w.strip(".-")) >= _MIN_WORD)
    return words
