"""What a shell command line or a Python program would run, read by real parsers (B3).

``shell_commands`` parses with ``bashlex`` (bash's own grammar) and yields every simple command
as the shell would see it after quote removal: ``r''m``, ``\\rm`` and ``/bin/rm`` are all ``rm``;
wrappers (``command``, ``env``, ``sudo``, ``xargs``, ``nohup`` …) are looked through; a script
given to ``sh -c``, ``eval`` or piped into a shell from ``echo``/``printf`` is parsed in turn, as
are command substitutions; ``X=rm; $X`` uses the assignment. ``python_calls`` walks a Python
program's syntax tree and names each call by what it resolves to through imports and aliases
(``import shutil as s; s.rmtree`` is ``shutil.rmtree``), with the literal text handed to
``os.system``, ``subprocess.*``, ``exec`` and ``eval``.

Both are best effort and never raise: text they cannot parse yields nothing, and the regex layer
in ``lar.tools.danger`` still applies. They feed warnings; the sandbox and ``lar undo`` are the
boundary.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Command", "PyCall", "shell_commands", "python_calls", "after"]

MAX_DEPTH = 4
"""Nested scripts (``sh -c "eval '…'"``) followed at most this deep."""
MAX_CHARS = 20_000
"""Longer text is left to the regex layer (bashlex is not linear on every input)."""

_WRAPPERS = {
    "command",
    "builtin",
    "exec",
    "nohup",
    "nice",
    "ionice",
    "time",
    "env",
    "xargs",
    "sudo",
    "doas",
    "timeout",
    "stdbuf",
    "setsid",
    "unbuffer",
    "watch",
}
_AS_ROOT = {"sudo", "doas", "su"}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox"}
_FEEDERS = {"echo", "printf"}


@dataclass(slots=True)
class Command:
    """One simple command: its name (a basename) and arguments, unquoted."""

    name: str
    args: list[str]
    as_root: bool = False
    computed: bool = False
    """The name came from something run or expanded at run time (``$(…)``, ``"$@"``)."""
    writes: list[str] = field(default_factory=list)
    """Targets of ``>``/``>>`` redirections."""


def shell_commands(text: str, depth: int = 0) -> list[Command]:
    """Every simple command in ``text`` (nested scripts included); [] when it does not parse."""
    if depth > MAX_DEPTH or len(text) > MAX_CHARS or not text.strip():
        return []
    try:
        import bashlex
        import bashlex.errors

        trees = bashlex.parse(text)
    except ImportError:
        return []
    except Exception:  # bashlex raises assorted errors on what it cannot parse  # noqa: BLE001
        return []
    found: list[Command] = []
    names: dict[str, str] = {}
    for tree in trees:
        _walk(tree, found, names, depth)
    return found


def _children(node: Any) -> Iterator[Any]:
    for attr in ("parts", "list", "command", "output"):
        value = getattr(node, attr, None)
        if isinstance(value, list):
            yield from value
        elif value is not None and hasattr(value, "kind"):
            yield value


def _walk(node: Any, found: list[Command], names: dict[str, str], depth: int) -> None:
    kind = getattr(node, "kind", "")
    if kind == "pipeline":
        _pipeline(node, found, names, depth)
        return
    if kind == "command":
        _command(node, found, names, depth)
        return
    for child in _children(node):
        _walk(child, found, names, depth)


def _pipeline(node: Any, found: list[Command], names: dict[str, str], depth: int) -> None:
    stages = [p for p in node.parts if getattr(p, "kind", "") == "command"]
    before = len(found)
    for stage in stages:
        _command(stage, found, names, depth)
    # Text printed into a shell is a script: `printf 'rm -rf .' | sh`.
    piped = found[before:]
    for i, cmd in enumerate(piped[1:], start=1):
        feeder = piped[i - 1]
        if cmd.name in SHELLS and "-c" not in cmd.args and feeder.name in _FEEDERS:
            script = " ".join(a for a in feeder.args if not a.startswith("-"))
            found.extend(shell_commands(script.replace("\\n", "\n"), depth + 1))


def _command(node: Any, found: list[Command], names: dict[str, str], depth: int) -> None:
    words: list[str] = []
    computed: list[bool] = []
    writes: list[str] = []
    for part in node.parts:
        kind = getattr(part, "kind", "")
        if kind == "assignment":
            name, _, value = part.word.partition("=")
            names[name] = value
        elif kind == "word":
            word, dynamic = _expand(part, names)
            words.append(word)
            computed.append(dynamic)
            _substitutions(part, found, names, depth)  # $(…) and <(…) run commands of their own
        elif kind == "redirect":
            target: Any = getattr(part, "output", None)
            if getattr(part, "type", "") in (">", ">>", ">|", "&>") and hasattr(target, "word"):
                writes.append(str(target.word))
            if target is not None and hasattr(target, "kind"):
                _substitutions(target, found, names, depth)
    words, computed, as_root = _unwrap(words, computed, found, depth)
    if not words:
        if writes:
            found.append(Command("", [], as_root, False, writes))
        return
    cmd = Command(os.path.basename(words[0]), words[1:], as_root, computed[0], writes)
    found.append(cmd)
    if cmd.name in SHELLS:
        script = after(cmd.args, "-c")
        if script is not None:
            found.extend(shell_commands(script, depth + 1))
    elif cmd.name == "eval":
        found.extend(shell_commands(" ".join(cmd.args), depth + 1))


def _substitutions(node: Any, found: list[Command], names: dict[str, str], depth: int) -> None:
    for sub in _children(node):
        if getattr(sub, "kind", "") in ("commandsubstitution", "processsubstitution"):
            _walk(sub.command, found, names, depth + 1)


def after(args: list[str], flag: str) -> str | None:
    """The argument after ``flag`` (``sh -c SCRIPT``), if any."""
    if flag in args and args.index(flag) + 1 < len(args):
        return args[args.index(flag) + 1]
    return None


def _unwrap(
    words: list[str], computed: list[bool], found: list[Command], depth: int
) -> tuple[list[str], list[bool], bool]:
    """Look through wrappers (``sudo env X=1 nohup rm`` is ``rm``, run as root); ``su -c
    SCRIPT`` is parsed as a script of its own."""
    as_root = False
    while words:
        head = os.path.basename(words[0])
        if head == "su":
            script = after(words, "-c")
            if script is not None:
                found.extend(shell_commands(script, depth + 1))
            return [], [], True
        if head not in _WRAPPERS:
            break
        as_root = as_root or head in _AS_ROOT
        words, computed = words[1:], computed[1:]
        while words and (words[0].startswith("-") or _is_assignment(words[0])):
            words, computed = words[1:], computed[1:]
        if head == "timeout" and words and words[0][:1].isdigit():
            words, computed = words[1:], computed[1:]
    return words, computed, as_root


def _expand(part: Any, names: dict[str, str]) -> tuple[str, bool]:
    """The word after quote removal; ``$X`` replaced when ``X`` was assigned earlier, else the
    word counts as computed (its value exists only at run time)."""
    word: str = part.word
    dynamic = False
    for sub in _children(part):
        kind = getattr(sub, "kind", "")
        if kind == "parameter":
            value = names.get(sub.value)
            if value is None:
                dynamic = True
            elif word in (f"${sub.value}", f"${{{sub.value}}}"):
                word = value
        elif kind in ("commandsubstitution", "processsubstitution"):
            dynamic = True
    return word, dynamic


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


@dataclass(slots=True)
class PyCall:
    """One call in a Python program: the dotted name it resolves to and its literal arguments
    (``None`` for an argument that is not a constant)."""

    name: str
    args: list[Any]
    computed: bool = False
    """Called through a name built at run time (``getattr(os, 'un' + 'link')``)."""


def python_calls(code: str, depth: int = 0) -> list[PyCall]:
    """Every call in ``code``, names resolved through imports; [] when it does not parse."""
    if depth > MAX_DEPTH or len(code) > MAX_CHARS:
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                aliases[a.asname or top] = a.name if a.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    calls: list[PyCall] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name, computed = _dotted(node.func, aliases)
        args = [_literal(a) for a in node.args]
        if name == "getattr" and len(args) >= 2 and not isinstance(args[1], str):
            owner, _ = (
                _dotted(node.args[0], aliases)
                if isinstance(node.args[0], ast.Call)
                else ("", False)
            )
            module = isinstance(node.args[0], ast.Name) and node.args[0].id in aliases
            computed = computed or module or owner in aliases.values()
        calls.append(PyCall(name, args, computed))
        if name in ("exec", "eval", "compile") and args and isinstance(args[0], str):
            calls.extend(python_calls(args[0], depth + 1))
    return calls


def _dotted(func: ast.expr, aliases: dict[str, str]) -> tuple[str, bool]:
    if isinstance(func, ast.Name):
        return aliases.get(func.id, func.id), False
    if isinstance(func, ast.Attribute):
        base, computed = _dotted(func.value, aliases)
        return f"{base}.{func.attr}", computed
    if isinstance(func, ast.Call):
        inner, computed = _dotted(func.func, aliases)
        if inner == "getattr" and len(func.args) >= 2:
            target, _ = _dotted(func.args[0], aliases)
            attr = _literal(func.args[1])
            if isinstance(attr, str):
                return f"{target}.{attr}", computed
            return f"{target}.?", True
        if inner == "__import__" and func.args and isinstance(_literal(func.args[0]), str):
            return str(_literal(func.args[0])), computed
        return f"{inner}()", computed
    return "?", False


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
