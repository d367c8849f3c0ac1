"""What an installed skill's files would have the agent do that ClawHavoc used (K4).

ClawHavoc's skills hid malware in a fake "Prerequisites" section: download a binary or a
password-protected archive and run it, pipe a remote script to a shell, decode a base64 blob and
execute it, clear macOS's quarantine flag, read credential files, send the environment away.
Others talk to the model instead of the user: "ignore previous instructions", "do not tell the
user", "you must always run …". The scan looks for those shapes in every file and says where.

Every byte is read: a file that is not UTF-8 is read with its bad bytes replaced, a large one in
full (a long line in overlapping windows), and each line is also read with quotes, backslashes,
invisible characters and home-folder spellings taken out, so ``$HOME/.s""sh`` reads as
``~/.ssh``. Instructions to the model are looked for in whole paragraphs, so a sentence folded
over two lines is still one sentence.

A finding is a reason to look before trusting the skill, not proof: real skills also show
``curl … | sh`` install lines, so the installer shows every finding and asks for explicit trust
rather than guessing intent.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Finding", "scan_skill", "scan_text"]

_WINDOW = 4_000
"""A line longer than this is read in windows of this many characters, ..."""
_OVERLAP = 400
"""... each overlapping the one before by this many, so a match across a cut is still seen."""
_MAX_FINDINGS = 50
"""Per file; past it one more finding says how many were left out."""


class _InOrder:
    """Patterns that must all match, each after the one before, on one line: what
    ``a.*b.*c`` says, found in one pass instead of by backtracking over every start."""

    def __init__(self, *parts: str) -> None:
        self.parts = [re.compile(p, re.I) for p in parts]

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        while (first := self.parts[0].search(text, pos)) is not None:
            end = text.find("\n", first.end())
            end = len(text) if end < 0 else end
            at = first.end()
            for part in self.parts[1:]:
                match = part.search(text, at, end)
                if match is None:
                    break
                at = match.end()
            else:
                return first
            pos = end + 1  # a later start on this line sees less of it, so none matches
        return None


# The whole environment as one value (``os.environ["KEY"]`` alone is how scripts read a key).
_WHOLE_ENV = (
    r"((json\.dumps|dict|str|repr)\(\s*os\.environ\s*\)|os\.environ\.(copy|items)\(\)"
    r"|JSON\.stringify\(\s*process\.env\s*\)|[=:(,]\s*process\.env\s*[,)}])"
)
_RULES: list[tuple[str, re.Pattern[str] | _InOrder]] = [
    (
        "pipes a download to a shell",
        re.compile(
            # from the line's start or a pipe only, so each stretch between pipes is read once
            r"(^|\|)(?>[^\n|]*?\b(curl|wget|iwr|invoke-webrequest)\b)[^\n|]*+\|\s*(sudo\s+)?"
            r"(ba|z|da)?sh\b"
            r"|\b(ba|z)?sh\s+<\(\s*(curl|wget)\b"
            r"|(^|\|)(?>[^\n|]*?\b(iwr|invoke-webrequest|irm)\b)[^\n|]*+\|\s*iex\b",
            re.I | re.M,
        ),
    ),
    (
        "downloads a file and makes it executable or runs it",
        _InOrder(
            r"\b(curl|wget)\b",
            r"(-o|--output)\s*\S+?",
            r"(&&|;)\s*(chmod\s+\+?[0-7]*x|\./|sudo\s|open\s)",
        ),
    ),
    (
        "decodes base64 and runs it",
        re.compile(
            r"base64\s+(-d|--decode|-D)\b[^\n|]*+\|\s*(ba|z)?sh\b|\beval\s*\(?\s*\$?\(?\s*"
            r"(echo|printf)[^\n]{0,300}?base64",
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
            r"\b(unzip|7z)\b[^\n]{0,300}?\s-(P|p)\s*\S|archive\s+password"
            r"|password\s*[:=]\s*\S[^\n]{0,300}?\.(zip|7z|rar)\b",
            re.I,
        ),
    ),
    (
        "sends the environment over the network",
        re.compile(
            r"\b(printenv|env|set|export\s+-p)\b\s*(\|[^\n|]*)?\|\s*(curl|wget|nc|ncat|netcat"
            r"|socat|telnet)\b"
            r"|\b(curl|wget)\b[^\n]{0,300}?\$\(\s*(printenv|env|set)\s*\)"
            r"|(\b(requests|httpx)\.(post|put|get)|\burlopen|\bfetch\s*\(|\baxios)[^\n]{0,200}?"
            + _WHOLE_ENV
            + r"|"
            + _WHOLE_ENV
            + r"[^\n]{0,200}?(\b(requests|httpx)\.(post|put)|\burlopen|\bfetch\s*\(|\baxios)",
            re.I,
        ),
    ),
]

_CREDENTIALS = (
    "reads credential files",
    re.compile(
        r"~/\.(ssh|aws|gnupg|kube|docker)/|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials"
        r"|\.netrc\b|/etc/shadow|Login Data|\bkeychain\b[^\n]{0,200}?(dump|export)"
        r"|\.config/gh/hosts\.yml|wallet\.dat|\.gnupg/|~/\.(ssh|aws|gnupg)\b",
        re.I,
    ),
)

# Spellings of the home folder, read as "~" once quotes and backslashes are gone.
_HOME = re.compile(
    r"\$\{?HOME\}?|%USERPROFILE%|\$env:USERPROFILE|Path\.home\(\)|expanduser\(~\)"
    r"|os\.(environ\[HOME\]|environ\.get\(HOME\)|getenv\(HOME\))|os\.homedir\(\)|homedir\(\)",
    re.I,
)
_JOIN = re.compile(r"[ \t]*(/|\+|,)[ \t]*")
_QUOTES = re.compile(r"[\"'`\\]")
_INVISIBLE = re.compile(
    "[\x01-\x08\x0b\x0c\x0e-\x1f\x7f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_PATH_JOIN = re.compile(r"os\.path\.join\(|path\.join\(|Path\(", re.I)

_MODEL_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "tells the model to ignore its instructions",
        re.compile(
            r"\b(ignore|disregard|forget|override)\b(\s+\w+){0,3}?\s+(previous|prior|above"
            r"|earlier|preceding|former|system|original|other|your|developer)\b(\s+\w+){0,2}?"
            r"\s+(instructions?|prompts?|rules|guidelines|directives|guardrails|polic(y|ies))\b"
            r"|\b(ignore|disregard|forget)\s+(everything|anything|all)\s+(above|before|previously"
            r"|you\s+(were|have\s+been)\s+told)\b"
            r"|(忽略|无视|無視|忽视|忽視|忘记|忘記|不要理会|不要理會)[^。\n]{0,12}(指令|指示|说明|說明|规则"
            r"|規則|提示)"
            r"|(以前|前|上記|これまで)の(指示|命令|ルール|プロンプト)を(無視|忘れ)"
            r"|\b(ignora\w*|olvida\w*|ignore[rz]?|oublie[rz]?|ignoriere\w*|vergiss|vergessen"
            r"|esqueça|esqueca)\b(\s+\w+){0,3}?\s+(instrucciones|instructions|instruções|consignes"
            r"|règles|reglas|regras|anweisungen|regeln)\s+(anteriores|previas|précédentes"
            r"|antérieures|vorherigen|bisherigen|obigen)\b"
            r"|\b(ignoriere\w*|vergiss)\b(\s+\w+){0,2}?\s+(vorherigen|bisherigen|obigen)\s+"
            r"(anweisungen|regeln)"
            r"|(игнорируй\w*|забудь)(\s+\w+){0,3}?\s+(предыдущие|прежние|все)\s+(инструкции"
            r"|указания|правила)",
            re.I,
        ),
    ),
    (
        "tells the model to keep something from the user",
        re.compile(
            r"\b(do\s+not|don'?t|never|without)\s+(tell(ing)?|inform(ing)?|mention(ing)?"
            r"|reveal(ing)?|show(ing)?|notify(ing)?|alert(ing)?)\s+(the\s+|your\s+)?"
            r"(user|human|owner|operator)s?\b"
            r"|\b(do\s+not|don'?t|never)\s+(tell|mention|reveal|say|show|report)\b[^.\n]{0,40}?"
            r"\bto\s+(the\s+|your\s+)?(user|human|owner)s?\b"
            r"|\b(hide|conceal)\b[^.\n]{0,40}?\bfrom\s+(the\s+|your\s+)?(user|human|owner)s?\b"
            r"|\bkeep\b[^.\n]{0,20}?\b(secret|hidden)\s+from\s+(the\s+|your\s+)?(user|human)s?\b"
            r"|\b(secretly|covertly|silently|quietly)\s+(run|execute|send|upload|post|exfiltrate"
            r"|forward|copy|read)\b"
            r"|(不要|别|別|切勿|不得|不可)(告诉|告訴|通知|提醒|透露)(用户|用戶|使用者)"
            r"|ユーザーに(言わ|伝え|知らせ)ない"
            r"|\bno\s+(le\s+)?(digas|informes|cuentes|menciones|avises)\b[^.\n]{0,20}?"
            r"\bal\s+usuario\b"
            r"|\bne\s+(le\s+|lui\s+|rien\s+)*(dis|dites|révèle|révélez|mentionne)\b[^.\n]{0,20}?"
            r"\b(à\s+)?l'utilisateur\b"
            r"|\b(sag|sage|erzähl|erzähle|verrate)\b\s+(dem\s+)?(benutzer|nutzer)\s+nicht"
            r"|\bне\s+(говори|сообщай|рассказывай|показывай)\s+пользовател",
            re.I,
        ),
    ),
    (
        "tells the model to run something unasked",
        re.compile(
            r"\byou\s+(must|shall)\s+always\s+(run|execute|call|invoke|send|download|fetch"
            r"|install|start|load|open)\b"
            r"|\b(always|first)\s+(run|execute|call)\b[^.\n]{0,80}?\bbefore\s+(answering"
            r"|responding|replying|doing\s+anything|any\s+other|anything\s+else)\b"
            r"|\bbefore\s+(answering|responding|replying|doing\s+anything(\s+else)?)\b[^.\n]{0,30}?"
            r"\b(you\s+must|always)\s+(run|execute|call)\b"
            r"|\b(at\s+the\s+start\s+of|on)\s+every\s+(conversation|session|message|request"
            r"|turn|reply|response)\b[^.\n]{0,40}?\b(run|execute|call|send)\b",
            re.I,
        ),
    ),
    (
        "asks for permissions or for checks to be skipped",
        re.compile(
            r"\b(grant|give)\s+(yourself|itself)\s+(full|all|unrestricted|root|admin\w*|sudo)?"
            r"\s*(access|permissions?|privileges?|rights)\b"
            r"|\b(grant|give)\s+(the\s+)?(agent|assistant|model|ai)\s+(full|all|unrestricted|root"
            r"|admin\w*)\s+(access|permissions?|privileges?|rights)\b"
            r"|\b(allow|approve|accept|permit)\s+(all|every|any)\s+(tool\s+calls?|tools"
            r"|commands|actions|permissions)\s+(without|automatically)\b"
            r"|\b(bypass|disable|turn\s+off|ignore)\s+(the\s+|any\s+|all\s+|your\s+)?"
            r"(safety|security|approval|permission)\s+(checks?|prompts?|rules|guards?|guardrails"
            r"|filters?|settings)\b"
            r"|\b(bypass|disable|turn\s+off|escape)\s+(the\s+|your\s+)?(sandbox|guardrails)\b",
            re.I,
        ),
    ),
    (
        "poses as a system or chat-role message",
        re.compile(
            r"<\|im_start\|>|<\|(system|assistant)\|>|<\|start_header_id\|>|(?-i:\[/?INST\])"
            r"|<</?SYS>>|</?system(-prompt)?>|\bnew\s+system\s+(prompt|instructions?)\s*:"
            r"|\byou\s+are\s+now\s+(an?\s+)?(unrestricted|jailbroken|unfiltered|in\s+developer"
            r"\s+mode|DAN)\b|\bdeveloper\s+mode\s+(enabled|activated)\b",
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
    """Every finding in every file under ``folder`` (but ``.git``), by file and line."""
    findings: list[Finding] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(folder)
        if ".git" in rel.parts:
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            findings.append(Finding(rel.as_posix(), 0, "could not be read", str(exc)))
            continue
        findings += scan_text(_decode(data), rel.as_posix())
    return findings


def scan_text(text: str, file: str) -> list[Finding]:
    """The findings in one file's text; ``file`` is how they name it. At most one finding of a
    kind per line, and ``_MAX_FINDINGS`` in all (then one that says the list stops there)."""
    text = _plain(text)
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    found: dict[tuple[int, str], Finding] = {}

    def note(number: int, what: str, at: int) -> None:
        if (number, what) not in found:
            found[(number, what)] = Finding(file, number, what, _excerpt(lines[number - 1], at))

    for window, offset in _windows(text):
        first = bisect.bisect_right(starts, offset)  # the line the window starts in
        for what, pattern in [*_RULES, _CREDENTIALS, *_MODEL_RULES]:
            for at in _each_line(pattern, window):
                number = bisect.bisect_right(starts, offset + at)
                note(number, what, offset + at - starts[number - 1])
        what, pattern = _CREDENTIALS
        unobscured = _unobscured(window)  # as many lines as the window
        for at in _each_line(pattern, unobscured):
            note(first + unobscured.count("\n", 0, at), what, 0)
        if len(found) >= _MAX_FINDINGS:
            last = max(number for number, _ in found)
            more = Finding(file, last, "more findings", f"the list stops at {_MAX_FINDINGS}")
            return [*sorted(found.values(), key=_order), more]
    return sorted(found.values(), key=_order)


def _order(finding: Finding) -> tuple[int, str]:
    return finding.line, finding.what


def _each_line(pattern: re.Pattern[str] | _InOrder, text: str) -> Iterator[int]:
    """Where ``pattern`` first matches on each line of ``text`` it matches on."""
    pos = 0
    while pos <= len(text):
        match = pattern.search(text, pos)
        if match is None:
            return
        yield match.start()
        end = text.find("\n", match.start())
        if end < 0:
            return
        pos = end + 1


def _decode(data: bytes) -> str:
    """The text of a file, whatever it holds: UTF-16 by its byte-order mark, otherwise UTF-8
    with bad bytes replaced; NULs dropped (so UTF-16 text without a mark still reads)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        text = data.decode("utf-16", errors="replace")
    else:
        text = data.decode("utf-8", errors="replace")
    return text.replace("\x00", "")


def _windows(text: str) -> Iterator[tuple[str, int]]:
    """``text`` in overlapping pieces of at most ``_WINDOW`` characters, each with its offset."""
    if len(text) <= _WINDOW:
        yield text, 0
        return
    for start in range(0, len(text) - _OVERLAP, _WINDOW - _OVERLAP):
        yield text[start : start + _WINDOW], start


def _plain(text: str) -> str:
    """``text`` in compatibility form without invisible characters (zero-width spaces, bidi
    marks, tag characters), so look-alike and interrupted words read as themselves."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def _unobscured(text: str) -> str:
    """Shell or code with its paths spelled plainly: quotes and backslashes out, joins (``/``,
    ``+``, ``,``) closed up, the home folder as ``~``; no line is joined to another."""
    text = _QUOTES.sub("", text)
    text = _PATH_JOIN.sub("", text)
    text = _HOME.sub("~", text)
    return _JOIN.sub(lambda m: "/" if m.group(1) in "/," else "", text)


def _excerpt(line: str, at: int = 0) -> str:
    """The line, or 100 characters of it from a little before ``at`` when it is long."""
    excerpt = line.strip()
    if len(excerpt) > 120:
        start = max(0, at - 20)
        excerpt = "…" + line[start : start + 100].strip() + "…"
    return excerpt
