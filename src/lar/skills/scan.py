"""What an installed skill's files would have the agent do that ClawHavoc used (K4).

ClawHavoc's skills hid malware in a fake "Prerequisites" section: download a binary or a
password-protected archive and run it, pipe a remote script to a shell, decode a base64 blob and
execute it, clear macOS's quarantine flag, read credential files. The scan looks for those shapes
in every text file and says where. A finding is a reason to look before trusting the skill, not
proof: real skills also show ``curl … | sh`` install lines, so the installer reports findings and
asks for explicit trust rather than guessing intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Finding", "scan_skill"]

_TEXT_LIMIT = 2_000_000
_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "pipes a download to a shell",
        re.compile(
            r"\b(curl|wget|iwr|invoke-webrequest)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b"
            r"|\b(ba|z)?sh\s+<\(\s*(curl|wget)\b"
            r"|\b(iwr|invoke-webrequest|irm)\b[^\n|]*\|\s*iex\b",
            re.I,
        ),
    ),
    (
        "downloads a file and makes it executable or runs it",
        re.compile(
            r"\b(curl|wget)\b[^\n]*(-o|-O|--output)\s*\S+[^\n]*(&&|;)\s*"
            r"(chmod\s+\+?[0-7]*x|\./|sudo\s|open\s)",
            re.I,
        ),
    ),
    (
        "decodes base64 and runs it",
        re.compile(
            r"base64\s+(-d|--decode|-D)\b[^\n]*\|\s*(ba|z)?sh\b|\beval\s*\(?\s*\$?\(?\s*"
            r"(echo|printf)[^\n]*base64",
            re.I,
        ),
    ),
    ("carries a long base64 blob", re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")),
    (
        "clears macOS quarantine (Gatekeeper bypass)",
        re.compile(r"xattr\s+(-[a-z]*\s+)*(-c|-d\s+com\.apple\.quarantine)", re.I),
    ),
    (
        "uses a password-protected archive",
        re.compile(
            r"\b(unzip|7z)\b[^\n]*\s-(P|p)\s*\S+|archive\s+password|password\s*[:=]\s*\S+"
            r"[^\n]*\.(zip|7z|rar)\b",
            re.I,
        ),
    ),
    (
        "reads credential files",
        re.compile(
            r"~/\.ssh/|\bid_(rsa|ed25519|ecdsa)\b|\.aws/credentials|\.netrc\b|/etc/shadow"
            r"|Login Data|\bkeychain\b[^\n]*(dump|export)|\.config/gh/hosts\.yml"
            r"|wallet\.dat|\.gnupg/",
            re.I,
        ),
    ),
]


@dataclass(frozen=True, slots=True)
class Finding:
    file: str
    line: int
    what: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what}: {self.excerpt}"


def scan_skill(folder: Path) -> list[Finding]:
    findings: list[Finding] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        if ".git" in path.relative_to(folder).parts or path.stat().st_size > _TEXT_LIMIT:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(folder).as_posix()
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in _RULES:
                match = pattern.search(line)
                if match:
                    excerpt = line.strip()
                    if len(excerpt) > 120:
                        start = max(0, match.start() - 20)
                        excerpt = "…" + line[start : start + 100].strip() + "…"
                    findings.append(Finding(rel, number, what, excerpt))
    return findings
