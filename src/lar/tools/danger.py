"""Dangerous-command detection (B3), for shell text and Python code the model wants to run.

``assess`` sorts a command into one of three levels:

- ``refuse``: never run, not even with ``--yes`` (wiping a disk or ``/``, fork bombs, formatting
  file systems, overwriting block devices);
- ``confirm``: run only when a person says yes (``rm -r``, ``curl … | sh``, ``chmod -R 777``,
  ``sudo``, writes outside the workspace, killing processes, shutting down …);
- ``ok``: nothing matched.

Pattern matching cannot prove a command safe (the sandbox contains what slips through); it exists
so that the obviously destructive is never run silently.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

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


def assess(command: str, *, workspace: Path | None = None) -> Verdict:
    """Classify a shell command or a Python program."""
    reasons_refuse = [why for why, rx in _REFUSE if rx.search(command)]
    if reasons_refuse:
        return Verdict("refuse", _unique(reasons_refuse))
    reasons = [why for why, rx in _CONFIRM if rx.search(command)]
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
