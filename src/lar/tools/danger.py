"""Dangerous-command detection (B3), for shell text and Python code the model wants to run.

``assess`` sorts a command into one of three levels:

- ``refuse``: never run, not even with ``--yes`` (wiping a disk or ``/``, fork bombs, formatting
  file systems, overwriting block devices);
- ``confirm``: run only when a person says yes (``rm -r``, ``curl … | sh``, ``chmod -R 777``,
  ``sudo``, writes outside the workspace, killing processes, shutting down …);
- ``ok``: nothing matched.

Two layers feed it: regexes over the raw text, and real parsers (``lar.tools.commands``: bashlex
for shell, Python's ``ast`` for code) that see ``r''m``, ``/bin/rm``, ``command rm``,
``sh -c '…'``, ``eval``, ``X=rm; $X``, ``import shutil as s; s.rmtree`` and
``os.system('…')`` for what they are. Neither can prove a command safe (the sandbox and
``lar undo`` contain what slips through); they exist so that the obviously destructive is never
run silently.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lar.tools.commands import Command, after, python_calls, shell_commands

__all__ = ["Verdict", "assess", "Level", "runs_code_later"]

Level = Literal["ok", "confirm", "refuse"]

_SEP = r"(?:^|[;&|(`]|\$\(|\bthen\b|\bdo\b|\bxargs\b|\bsudo\b|\bexec\b|\bnohup\b|\benv\b)\s*"

_SYSTEM_DIRS = r"(?:/|/\*|~|~/|\$HOME|/home|/root|/etc|/usr|/var|/boot|/bin|/lib)/?(?:\s|$|;|&)"

_REFUSE: list[tuple[str, re.Pattern[str]]] = [
    ("fork bomb", re.compile(r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&?[^}]*\}")),
    ("fork bomb", re.compile(r"\b(?:while|for)\b[^:\n]*:[\s\S]{0,200}?\bos\.fork\(\)")),
    (
        "removes the root or home directory",
        re.compile(
            _SEP + r"rm\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*" + _SYSTEM_DIRS
        ),
    ),
    ("--no-preserve-root", re.compile(r"--no-preserve-root")),
    ("formats a file system", re.compile(_SEP + r"mkfs(?:\.\w+)?\b|\bmkswap\b|\bwipefs\b")),
    (
        "writes to a block device",
        re.compile(
            r"\bdd\b[^;|&\n]*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b)|>\s*/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|disk)\w*"
        ),
    ),
    ("shreds a device", re.compile(r"\bshred\b[^;|&\n]*/dev/")),
]

_CONFIRM: list[tuple[str, re.Pattern[str]]] = [
    ("recursive delete", re.compile(_SEP + r"rm\s+(?:-\S+\s+)*-[a-zA-Z]*[rRf]")),
    ("recursive delete", re.compile(r"\bshutil\.rmtree\(|\bos\.removedirs\(")),
    (
        "pipes a download into a shell",
        re.compile(
            r"\b(?:curl|wget|fetch)\b[^|;&\n]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)"
        ),
    ),
    (
        "world-writable permissions",
        re.compile(r"\bchmod\s+(?:-\S+\s+)*(?:-R\s+)?(?:0?777|a\+rwx|o\+w)\b"),
    ),
    ("recursive ownership change", re.compile(r"\bchown\s+(?:-\S*\s+)*-[a-zA-Z]*R")),
    ("runs as root", re.compile(_SEP + r"(?:sudo|su|doas)\b")),
    ("kills processes", re.compile(_SEP + r"(?:kill|pkill|killall)\b|\bos\.kill\(|\bos\.killpg\(")),
    (
        "shuts down or reboots",
        re.compile(_SEP + r"(?:shutdown|reboot|halt|poweroff|init\s+[06])\b"),
    ),
    (
        "changes the system's packages",
        re.compile(
            _SEP
            + r"(?:apt(?:-get)?|dnf|yum|pacman|zypper|apk)\s+"
            + r"(?:install|remove|purge|upgrade|dist-upgrade)\b"
        ),
    ),
    (
        "rewrites git history",
        re.compile(
            r"\bgit\s+(?:push\s+(?:-\S+\s+)*--force|push\s+-f\b|reset\s+--hard|clean\s+-[a-zA-Z]*f)"
        ),
    ),
    ("edits the crontab", re.compile(r"\bcrontab\s+-[er]\b")),
    (
        "touches a place that runs code later (git hooks, .pth files, shell startup, .envrc)",
        re.compile(
            r"\.git/hooks\b|\.pth\b|\.(?:bash|zsh)(?:rc|_profile|_login)\b|\.profile\b"
            r"|\.envrc\b|\b(?:site|user)customize\.py\b"
        ),
    ),
    ("overwrites a device or system file", re.compile(r">\s*/(?:etc|boot|usr|bin|sbin|lib)/")),
]

_WRITE_TARGET = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?)\s*([^\s;&|]+)")
_PY_WRITE = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wax]")


@dataclass(slots=True)
class Verdict:
    level: Level
    reasons: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.level == "ok"


def _outside(target: str, workspace: Path | None) -> bool:
    if workspace is None or target.startswith(("/dev/null", "/dev/stdout", "/dev/stderr", "&")):
        return False
    path = Path(os.path.expanduser(target.strip("'\"")))
    resolved = (path if path.is_absolute() else workspace / path).resolve()
    try:
        resolved.relative_to(workspace.resolve())
    except ValueError:
        return True
    return False


def assess(
    command: str,
    *,
    workspace: Path | None = None,
    language: Literal["shell", "python"] | None = None,
) -> Verdict:
    """Classify a shell command or a Python program (``language`` unknown: read as both)."""
    refuse, confirm = _parsed(command, language)
    reasons_refuse = [why for why, rx in _REFUSE if rx.search(command)] + refuse
    if reasons_refuse:
        return Verdict("refuse", _unique(reasons_refuse))
    reasons = [why for why, rx in _CONFIRM if rx.search(command)] + confirm
    for target in _WRITE_TARGET.findall(command) + _PY_WRITE.findall(command):
        if _outside(target, workspace):
            reasons.append(f"writes outside the workspace ({target})")
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = []
    if any(w in ("eval", "base64") for w in words) and "|" in command:
        reasons.append("decodes and runs hidden code")
    return Verdict("confirm", _unique(reasons)) if reasons else Verdict("ok")


_HOME_OR_ROOT = {
    "/",
    "/*",
    "~",
    "~/",
    "~/*",
    "$HOME",
    "${HOME}",
    "$HOME/",
    "$HOME/*",
    "/home",
    "/root",
    "/etc",
    "/usr",
    "/var",
    "/boot",
    "/bin",
    "/lib",
}
_DELETERS = {"rm", "shred", "unlink", "rmdir"}
_DELETE_FLAGS = ("delete", "remove-files", "remove-source")  # rsync --delete, tar --remove-files


def _parsed(text: str, language: str | None) -> tuple[list[str], list[str]]:
    """(refuse, confirm) reasons from the parsed commands and calls."""
    refuse: list[str] = []
    confirm: list[str] = []
    if language in (None, "shell"):
        for cmd in shell_commands(text):
            _judge(cmd, refuse, confirm)
    if language in (None, "python"):
        _judge_python(text, refuse, confirm)
    return refuse, confirm


_SIMPLE: dict[str, tuple[Level, str]] = {
    "shred": ("confirm", "shreds files"),
    "truncate": ("confirm", "truncates files"),
    "mkswap": ("refuse", "formats a file system"),
    "wipefs": ("refuse", "formats a file system"),
    "kill": ("confirm", "kills processes"),
    "pkill": ("confirm", "kills processes"),
    "killall": ("confirm", "kills processes"),
    "shutdown": ("confirm", "shuts down or reboots"),
    "reboot": ("confirm", "shuts down or reboots"),
    "halt": ("confirm", "shuts down or reboots"),
    "poweroff": ("confirm", "shuts down or reboots"),
}
"""Commands dangerous whatever their arguments."""


def _judge(cmd: Command, refuse: list[str], confirm: list[str]) -> None:
    name, args = cmd.name, cmd.args
    if cmd.as_root:
        confirm.append("runs as root")
    if cmd.computed:
        confirm.append(f"runs a command whose name is computed at run time ({name})")
    level, why = _SIMPLE.get("mkswap" if name.startswith("mkfs") else name, ("ok", ""))
    if level != "ok":
        (refuse if level == "refuse" else confirm).append(why)
    elif name == "rm":
        _judge_rm(args, refuse, confirm)
    elif name == "find":
        _judge_find(args, refuse, confirm)
    elif name == "dd" and any(a.startswith("of=") for a in args):
        confirm.append("overwrites a file (dd of=)")
    elif name in ("python", "python3"):
        code = after(args, "-c")
        if code is not None:
            _judge_python(code, refuse, confirm)
    flag = next((a for a in args if a.startswith("--") and any(w in a for w in _DELETE_FLAGS)), "")
    if flag:
        confirm.append(f"deletes files ({name} {flag.split('=')[0]})")


def _judge_rm(args: list[str], refuse: list[str], confirm: list[str]) -> None:
    short = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    recursive = "r" in short or "R" in short or "--recursive" in args
    if recursive and any(_home_or_root(a) for a in args if not a.startswith("-")):
        refuse.append("removes the root or home directory")
    elif recursive or "f" in short or "--force" in args:
        confirm.append("recursive delete")


def _judge_find(args: list[str], refuse: list[str], confirm: list[str]) -> None:
    runs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-exec", "-execdir", "-ok")]
    if "-delete" not in args and not any(os.path.basename(r) in _DELETERS for r in runs):
        return
    roots = [a for a in args if not a.startswith("-")][:1]
    if roots and _home_or_root(roots[0]):
        refuse.append("removes the root or home directory")
    else:
        confirm.append("deletes files (find)")


def _home_or_root(target: str) -> bool:
    return target in _HOME_OR_ROOT or (target.rstrip("/") or "/") in _HOME_OR_ROOT


_PY_SHELL = {
    "os.system",
    "os.popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
}


def _judge_python(code: str, refuse: list[str], confirm: list[str]) -> None:
    for call in python_calls(code):
        if call.computed:
            confirm.append("calls a function by a name computed at run time")
        first = call.args[0] if call.args else None
        if call.name in ("shutil.rmtree", "os.removedirs"):
            if isinstance(first, str) and _home_or_root(first):
                refuse.append("removes the root or home directory")
            else:
                confirm.append("recursive delete")
        elif call.name in _PY_SHELL:
            if isinstance(first, str):
                line = first
            elif isinstance(first, list | tuple) and all(isinstance(w, str) for w in first):
                line = " ".join(shlex.quote(w) for w in first)
            else:
                continue
            for cmd in shell_commands(line):
                _judge(cmd, refuse, confirm)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


_RUNS_LATER_NAMES = {
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".envrc",
    "sitecustomize.py",
    "usercustomize.py",
}


def runs_code_later(path: Path) -> str | None:
    """Why writing ``path`` would make code run later on the host (outside the sandbox), or
    ``None``: git hooks run at the next commit, ``.pth`` and ``*customize.py`` at every Python
    start, shell rc files and ``.envrc`` at the next shell."""
    parts = path.parts
    if ".git" in parts and "hooks" in parts[parts.index(".git") :]:
        return "a git hook (runs at the next git command)"
    if path.suffix == ".pth":
        return "a .pth file (runs at every Python start)"
    if path.name in _RUNS_LATER_NAMES:
        return f"{path.name} (runs at the next shell or Python start)"
    if ".config" in parts and "autostart" in parts:
        return "an autostart entry (runs at the next login)"
    return None
