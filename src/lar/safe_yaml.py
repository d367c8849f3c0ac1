"""YAML from files someone else may have written, read without letting its shape hurt Lar.

``yaml.safe_load`` refuses tags that build objects, but not two other shapes: aliases that
expand to billions of values once something walks the result ("billion laughs": each alias is
a shared reference, so loading is quick and the first ``str()`` or ``json.dumps`` is not), and
nesting deep enough to exhaust Python's recursion limit. ``load_yaml`` walks the parser's
events first, before anything is built, counting alias uses, how many values the document
expands to with every alias followed, and how deep it nests; past a limit it refuses the text
with a ``YamlError`` naming the source and the line.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = [
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_VALUES",
    "YamlError",
    "YamlTooComplex",
    "check_shape",
    "load_yaml",
]

MAX_ALIASES = 100
"""Alias uses (``*name`` and ``<<: *name``) a document may hold."""
MAX_DEPTH = 64
"""Mappings and sequences one inside the other."""
MAX_VALUES = 100_000
"""Values (scalars, mappings, sequences) the document holds with every alias expanded."""


class YamlError(ValueError):
    """YAML that cannot be read: ``source`` (a file name, or what the text is), ``line``
    (1-based in ``text``, 0 when unknown) and ``reason``."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason}")
        self.source = source
        self.line = line
        self.reason = reason


class YamlTooComplex(YamlError):
    """YAML refused for its shape (aliases, expansion, depth), not for its syntax."""


def load_yaml(text: str, *, source: str) -> Any:
    """``text`` as ``yaml.safe_load`` reads it, once it is known not to expand past
    ``MAX_VALUES`` values through aliases, use more than ``MAX_ALIASES`` aliases or nest deeper
    than ``MAX_DEPTH``. Raises ``YamlTooComplex`` for those, ``YamlError`` for bad syntax."""
    try:
        check_shape(text, source)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 0
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(source, line, f"not valid YAML ({reason})") from None
    except RecursionError:
        raise YamlTooComplex(
            source, 0, "nested too deeply to read (Python's recursion limit)"
        ) from None


def check_shape(text: str, source: str, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``YamlTooComplex`` when ``text`` nests deeper than ``max_depth``, uses more than
    ``MAX_ALIASES`` aliases or expands past ``MAX_VALUES`` values; reads the parser's events
    only (iterative: any depth and any alias is safe to scan). Bad syntax is ``yaml.YAMLError``."""
    # Each open collection is [anchor, values so far]; an anchor's size is known once it closes.
    open_: list[list[Any]] = []
    sizes: dict[str, int] = {}
    aliases = 0
    total = 0

    def add(count: int, line: int) -> None:
        nonlocal total
        if open_:
            open_[-1][1] += count
        else:
            total += count
        if total + sum(frame[1] for frame in open_) > MAX_VALUES:
            raise YamlTooComplex(
                source, line, f"expands to more than {MAX_VALUES:,} values through its aliases"
            )

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_) >= max_depth:
                raise YamlTooComplex(source, line, f"nested deeper than {max_depth} levels")
            open_.append([event.anchor, 1])
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, count = open_.pop()
            if anchor is not None:
                sizes[anchor] = count
            add(count, line)
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                sizes[event.anchor] = 1
            add(1, line)
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise YamlTooComplex(source, line, f"more than {MAX_ALIASES} aliases")
            if any(frame[0] == event.anchor for frame in open_):
                raise YamlTooComplex(
                    source, line, f"alias *{event.anchor} refers to a value that contains it"
                )
            if event.anchor in sizes:
                add(sizes[event.anchor], line)
            # an unknown anchor is left to the loader, which names it
