"""The ``logs`` capability: parse syslog-style lines, match the known patterns of the site's
pattern table (YAML: id, title, regex, severity, optional program), classify the incident and
keep tickets in a local JSON-lines file.

``open_ticket`` is idempotent: the ticket id is the hash of what the ticket says, so the same
findings never open two tickets and a run repeated on the same log gives the same result.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from lar.roles.capability import Probe
from lar.roles.library.schemas import INT, STR, capability, obj
from lar.roles.library.tables import TableError, compile_patterns, load_table

__all__ = ["LOGS"]

_LINE = re.compile(
    r"^(?P<ts>[A-Z][a-z]{2}\s+\d{1,2}\s\d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)"
    r"\s+(?P<host>\S+)\s+(?P<prog>[^\s:\[]+)(?:\[(?P<pid>\d+)\])?:\s?(?P<msg>.*)$"
)
LEVELS = ("ok", "info", "warning", "error", "critical")


def parse_syslog(args: dict[str, Any]) -> dict[str, Any]:
    entries = []
    unparsed = 0
    for number, line in enumerate(str(args["text"]).splitlines(), 1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is None:
            unparsed += 1
            continue
        entries.append(
            {
                "line": number,
                "timestamp": m["ts"],
                "host": m["host"],
                "program": m["prog"],
                "message": m["msg"],
            }
        )
    return {
        "status": "success" if entries else "no_entries",
        "entries": entries,
        "entry_count": len(entries),
        "unparsed_count": unparsed,
    }


def _patterns(source: Any) -> list[dict[str, Any]]:
    where, table = load_table(source, "patterns")
    out = []
    for i, p in enumerate(table["patterns"]):
        if not isinstance(p, dict) or not p.get("id") or not p.get("regex"):
            raise TableError(f"{where}: patterns[{i}] needs an id and a regex")
        severity = str(p.get("severity", "warning"))
        if severity not in LEVELS[1:]:
            raise TableError(
                f"{where}: {p['id']}: severity {severity!r} is not one of {LEVELS[1:]}"
            )
        out.append(
            {
                "id": str(p["id"]),
                "title": str(p.get("title", p["id"])),
                "severity": severity,
                "regex": compile_patterns(where, str(p["id"]), p["regex"]),
                "program": str(p["program"]) if p.get("program") else None,
            }
        )
    return out


def match_patterns(args: dict[str, Any]) -> dict[str, Any]:
    try:
        patterns = _patterns(args["patterns"])
    except TableError as exc:
        return {
            "status": "error",
            "error": str(exc),
            "matches": [],
            "matched_lines": 0,
            "unmatched_lines": 0,
        }
    matches: dict[str, dict[str, Any]] = {}
    matched = 0
    for e in args["entries"]:
        hit = False
        for p in patterns:
            if p["program"] and p["program"] != e["program"]:
                continue
            if any(r.search(e["message"]) for r in p["regex"]):
                hit = True
                m = matches.setdefault(
                    p["id"],
                    {
                        "pattern": p["id"],
                        "title": p["title"],
                        "severity": p["severity"],
                        "count": 0,
                        "first_line": e["line"],
                        "sample": e["message"][:200],
                    },
                )
                m["count"] += 1
        matched += hit
    ordered = sorted(
        matches.values(), key=lambda m: (-LEVELS.index(m["severity"]), m["first_line"])
    )
    return {
        "status": "success",
        "error": "",
        "matches": ordered,
        "matched_lines": matched,
        "unmatched_lines": len(args["entries"]) - matched,
    }


def describe_patterns(args: dict[str, Any]) -> dict[str, Any]:
    try:
        patterns = _patterns(args["patterns"])
    except TableError as exc:
        return {"status": "error", "error": str(exc), "pattern_count": 0, "patterns": []}
    listed = [
        {
            "id": p["id"],
            "title": p["title"],
            "severity": p["severity"],
            "program": p["program"] or "",
        }
        for p in patterns
    ]
    return {"status": "success", "error": "", "pattern_count": len(listed), "patterns": listed}


def classify_incident(args: dict[str, Any]) -> dict[str, Any]:
    matches = args["matches"]
    severity = max((m["severity"] for m in matches), key=LEVELS.index, default="ok")
    top = next((m for m in matches if m["severity"] == severity), None)
    return {
        "severity": severity,
        "incident_count": sum(
            m["count"] for m in matches if m["severity"] in ("error", "critical")
        ),
        "top_pattern": top["pattern"] if top else "",
        "needs_ticket": severity in ("error", "critical"),
    }


def _tickets_file(folder: Any) -> Path:
    return Path(str(folder)).expanduser() / "tickets.jsonl"


def open_ticket(args: dict[str, Any]) -> dict[str, Any]:
    body = {
        "title": str(args["title"]),
        "severity": str(args["severity"]),
        "matches": [
            {k: m[k] for k in ("pattern", "title", "severity", "count", "first_line")}
            for m in args["matches"]
        ],
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    ticket_id = "T-" + hashlib.sha256(canonical.encode()).hexdigest()[:10]
    file = _tickets_file(args["folder"])
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        known = (
            {json.loads(line)["id"] for line in file.read_text().splitlines() if line.strip()}
            if file.exists()
            else set()
        )
        if ticket_id not in known:
            with open(file, "a", encoding="utf-8") as f:
                f.write(json.dumps({"id": ticket_id, **body}, sort_keys=True) + "\n")
                f.flush()
                os.fsync(f.fileno())
    except (OSError, ValueError, KeyError) as exc:
        return {"status": "error", "error": f"{file}: {exc}", "ticket_id": "", "file": str(file)}
    return {"status": "success", "error": "", "ticket_id": ticket_id, "file": str(file)}


def read_tickets(args: dict[str, Any]) -> dict[str, Any]:
    file = _tickets_file(args["folder"])
    tickets = []
    try:
        lines = file.read_text(encoding="utf-8").splitlines() if file.exists() else []
        for line in lines:
            if line.strip():
                t = json.loads(line)
                tickets.append({"id": t["id"], "title": t["title"], "severity": t["severity"]})
    except (OSError, ValueError, KeyError) as exc:
        return {"status": "error", "error": f"{file}: {exc}", "ticket_count": 0, "tickets": []}
    return {"status": "success", "error": "", "ticket_count": len(tickets), "tickets": tickets}


_ENTRY = obj({"line": INT, "timestamp": STR, "host": STR, "program": STR, "message": STR})
_MATCH = obj(
    {"pattern": STR, "title": STR, "severity": STR, "count": INT, "first_line": INT, "sample": STR}
)


LOGS = capability(
    "logs",
    "1.0.0",
    [
        (
            "parse_syslog",
            parse_syslog,
            obj({"text": STR}),
            obj(
                {
                    "status": {"type": "string", "enum": ["success", "no_entries"]},
                    "entries": {"type": "array", "items": _ENTRY},
                    "entry_count": INT,
                    "unparsed_count": INT,
                }
            ),
        ),
        (
            "match_patterns",
            match_patterns,
            obj({"entries": {"type": "array", "items": _ENTRY}, "patterns": {}}),
            obj(
                {
                    "status": STR,
                    "error": STR,
                    "matches": {"type": "array", "items": _MATCH},
                    "matched_lines": INT,
                    "unmatched_lines": INT,
                }
            ),
        ),
        (
            "classify_incident",
            classify_incident,
            obj({"matches": {"type": "array", "items": _MATCH}}),
            obj(
                {
                    "severity": {"type": "string", "enum": list(LEVELS)},
                    "incident_count": INT,
                    "top_pattern": STR,
                    "needs_ticket": {"type": "boolean"},
                }
            ),
        ),
        (
            "open_ticket",
            open_ticket,
            obj(
                {
                    "folder": STR,
                    "title": STR,
                    "severity": STR,
                    "matches": {"type": "array", "items": _MATCH},
                }
            ),
            obj({"status": STR, "error": STR, "ticket_id": STR, "file": STR}),
        ),
        (
            "describe_patterns",
            describe_patterns,
            obj({"patterns": {}}),
            obj(
                {
                    "status": STR,
                    "error": STR,
                    "pattern_count": INT,
                    "patterns": {"type": "array", "items": {"type": "object"}},
                }
            ),
        ),
        (
            "read_tickets",
            read_tickets,
            obj({"folder": STR}),
            obj(
                {
                    "status": STR,
                    "error": STR,
                    "ticket_count": INT,
                    "tickets": {"type": "array", "items": {"type": "object"}},
                }
            ),
        ),
    ],
    probe=Probe(
        "parse_syslog",
        {"text": "Jan  1 00:00:00 host sshd[1]: probe"},
        {"status": "success", "entry_count": 1},
    ),
)
