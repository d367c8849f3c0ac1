"""The ``clauses`` capability: split a contract into clauses, check them against the office's
clause table, score the risk.

The table (YAML, written by the domain expert) lists rules: a *required* clause (found when one of
its ``patterns`` matches a clause, unless one of its ``unless`` patterns matches that same clause,
e.g. "is not confidential"), or a *red flag* (found when one of its patterns matches anywhere).
Each rule has a severity; ``risk:`` gives the points per severity and the score at which the risk
is medium or high. ``keyword_match`` is the degraded matcher: plain keywords, no patterns.
"""

from __future__ import annotations

import re
from typing import Any

from lar.roles.capability import Probe
from lar.roles.library.schemas import INT, STR, capability, obj
from lar.roles.library.tables import TableError, compile_patterns, load_table

__all__ = ["CLAUSES"]

_HEADING = re.compile(
    r"^\s*(?:(?:section|article|clause|§)\s*)?(\d{1,3}(?:\.\d{1,3})*)[.)]?\s+(\S.*)$",
    re.IGNORECASE,
)
SEVERITIES = ("low", "medium", "high")


def split_clauses(args: dict[str, Any]) -> dict[str, Any]:
    clauses: list[dict[str, Any]] = []
    preamble: list[str] = []
    for line in str(args["text"]).splitlines():
        m = _HEADING.match(line)
        if m and "." not in m.group(1):
            clauses.append({"number": m.group(1), "title": m.group(2).strip(), "text": ""})
        elif clauses:
            body = clauses[-1]["text"]
            clauses[-1]["text"] = f"{body}\n{line}".strip() if line.strip() else body
        elif line.strip():
            preamble.append(line.strip())
    for c in clauses:
        c["text"] = f"{c['title']}\n{c['text']}".strip()
    return {
        "status": "success" if clauses else "no_clauses",
        "clauses": clauses,
        "clause_count": len(clauses),
        "preamble": " ".join(preamble)[:500],
    }


def _rules(source: Any) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    where, table = load_table(source, "rules")
    rules = []
    for i, rule in enumerate(table["rules"]):
        if not isinstance(rule, dict) or not rule.get("id"):
            raise TableError(f"{where}: rules[{i}] needs an id")
        rid = str(rule["id"])
        severity = str(rule.get("severity", "medium"))
        if severity not in SEVERITIES:
            raise TableError(f"{where}: {rid}: severity {severity!r} is not one of {SEVERITIES}")
        rules.append(
            {
                "id": rid,
                "title": str(rule.get("title", rid)),
                "kind": "red_flag" if rule.get("red_flag") else "required",
                "severity": severity,
                "patterns": compile_patterns(where, rid, rule.get("patterns")),
                "unless": compile_patterns(where, rid, rule.get("unless")),
                "keywords": [str(k).casefold() for k in rule.get("keywords") or []],
            }
        )
    return where, table, rules


def _snippet(text: str, m: re.Match[str]) -> str:
    start, end = max(0, m.start() - 40), min(len(text), m.end() + 40)
    return " ".join(text[start:end].split())


def _finding(
    rule: dict[str, Any], status: str, clause: str = "", evidence: str = ""
) -> dict[str, Any]:
    return {
        "rule": rule["id"],
        "title": rule["title"],
        "kind": rule["kind"],
        "severity": rule["severity"],
        "status": status,
        "clause": clause,
        "evidence": evidence,
    }


def _summary(findings: list[dict[str, Any]], confidence: float) -> dict[str, Any]:
    return {
        "status": "success",
        "error": "",
        "findings": findings,
        "rule_count": len(findings),
        "present_count": sum(f["status"] == "present" for f in findings),
        "missing_count": sum(f["status"] in ("missing", "negated") for f in findings),
        "flagged_count": sum(f["status"] == "flagged" for f in findings),
        "confidence_score": confidence,
    }


def _error(exc: Exception) -> dict[str, Any]:
    return {
        "status": "error",
        "error": str(exc),
        "findings": [],
        "rule_count": 0,
        "present_count": 0,
        "missing_count": 0,
        "flagged_count": 0,
        "confidence_score": 0.0,
    }


def match_clauses(args: dict[str, Any]) -> dict[str, Any]:
    try:
        _, _, rules = _rules(args["rules"])
    except TableError as exc:
        return _error(exc)
    clauses = args["clauses"]
    findings = []
    for rule in rules:
        if rule["kind"] == "red_flag":
            hit = next(
                ((c, m) for c in clauses for p in rule["patterns"] if (m := p.search(c["text"]))),
                None,
            )
            findings.append(
                _finding(rule, "flagged", hit[0]["number"], _snippet(hit[0]["text"], hit[1]))
                if hit
                else _finding(rule, "clear")
            )
            continue
        found = None
        negated = None
        for c in clauses:
            m = next((m for p in rule["patterns"] if (m := p.search(c["text"]))), None)
            if m is None:
                continue
            neg = next((n for p in rule["unless"] if (n := p.search(c["text"]))), None)
            if neg is not None:
                negated = negated or (c, neg)
                continue
            found = (c, m)
            break
        if found:
            findings.append(
                _finding(rule, "present", found[0]["number"], _snippet(found[0]["text"], found[1]))
            )
        elif negated:
            findings.append(
                _finding(
                    rule, "negated", negated[0]["number"], _snippet(negated[0]["text"], negated[1])
                )
            )
        else:
            findings.append(_finding(rule, "missing"))
    return _summary(findings, 1.0)


def keyword_match(args: dict[str, Any]) -> dict[str, Any]:
    """The degraded matcher: a rule is present (or a red flag raised) when one of its keywords
    appears in a clause; no patterns, no ``unless``."""
    try:
        _, _, rules = _rules(args["rules"])
    except TableError as exc:
        return _error(exc)
    findings = []
    for rule in rules:
        words = rule["keywords"] or [rule["title"].casefold()]
        hit = next((c for c in args["clauses"] for w in words if w in c["text"].casefold()), None)
        if rule["kind"] == "red_flag":
            findings.append(
                _finding(rule, "flagged", hit["number"]) if hit else _finding(rule, "clear")
            )
        else:
            findings.append(
                _finding(rule, "present", hit["number"]) if hit else _finding(rule, "missing")
            )
    return _summary(findings, 0.6)


def score_risk(args: dict[str, Any]) -> dict[str, Any]:
    try:
        where, table, _ = _rules(args["rules"])
    except TableError as exc:
        return {
            "status": "error",
            "error": str(exc),
            "level": "unknown",
            "score": 0,
            "missing_required": 0,
            "red_flags": 0,
            "reasons": [],
        }
    risk = table.get("risk") or {}
    points = {"low": 1, "medium": 2, "high": 3, **(risk.get("points") or {})}
    medium_at = int(risk.get("medium_at", 2))
    high_at = int(risk.get("high_at", 4))
    score = 0
    reasons = []
    missing = flagged = 0
    for f in args["findings"]:
        if f["status"] in ("missing", "negated"):
            missing += 1
            score += int(points.get(f["severity"], 2))
            word = "missing" if f["status"] == "missing" else "negated"
            reasons.append(f"{f['title']}: {word} ({f['severity']})")
        elif f["status"] == "flagged":
            flagged += 1
            score += int(points.get(f["severity"], 2))
            reasons.append(f"{f['title']}: red flag in clause {f['clause']} ({f['severity']})")
    level = "high" if score >= high_at else "medium" if score >= medium_at else "low"
    del where
    return {
        "status": "success",
        "error": "",
        "level": level,
        "score": score,
        "missing_required": missing,
        "red_flags": flagged,
        "reasons": reasons,
    }


def describe_rules(args: dict[str, Any]) -> dict[str, Any]:
    try:
        _, _, rules = _rules(args["rules"])
    except TableError as exc:
        return {"status": "error", "error": str(exc), "rule_count": 0, "rules": []}
    listed = [{k: r[k] for k in ("id", "title", "kind", "severity")} for r in rules]
    return {"status": "success", "error": "", "rule_count": len(listed), "rules": listed}


def _key(title: str) -> str:
    return " ".join(re.findall(r"\w+", title.casefold()))


def compare_clauses(args: dict[str, Any]) -> dict[str, Any]:
    """Two versions of a contract, clause by clause, matched by title: added, removed, changed
    (the text differs beyond spacing and case) and unchanged."""
    old = {_key(c["title"]): c for c in args["previous"]}
    new = {_key(c["title"]): c for c in args["current"]}

    def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return " ".join(a["text"].casefold().split()) == " ".join(b["text"].casefold().split())

    added = [{"number": new[k]["number"], "title": new[k]["title"]} for k in new if k not in old]
    removed = [{"number": old[k]["number"], "title": old[k]["title"]} for k in old if k not in new]
    changed = [
        {"title": new[k]["title"], "previous_number": old[k]["number"], "number": new[k]["number"]}
        for k in new
        if k in old and not same(old[k], new[k])
    ]
    unchanged = sum(1 for k in new if k in old and same(old[k], new[k]))
    return {
        "status": "success" if old and new else "no_clauses",
        "added": added,
        "removed": removed,
        "changed": changed,
        "unchanged_count": unchanged,
    }


_CLAUSE = {
    "type": "object",
    "properties": {"number": STR, "title": STR, "text": STR},
    "required": ["number", "title", "text"],
}
_FINDING = {
    "type": "object",
    "properties": {
        k: STR for k in ("rule", "title", "kind", "severity", "status", "clause", "evidence")
    },
    "required": ["rule", "title", "kind", "severity", "status", "clause", "evidence"],
}
_MATCH_OUT = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["success", "error"]},
        "error": STR,
        "findings": {"type": "array", "items": _FINDING},
        "rule_count": INT,
        "present_count": INT,
        "missing_count": INT,
        "flagged_count": INT,
        "confidence_score": {"type": "number"},
    },
    "required": [
        "status",
        "error",
        "findings",
        "rule_count",
        "present_count",
        "missing_count",
        "flagged_count",
        "confidence_score",
    ],
}
_MATCH_IN = {
    "type": "object",
    "properties": {"clauses": {"type": "array", "items": _CLAUSE}, "rules": {}},
    "required": ["clauses", "rules"],
}


CLAUSES = capability(
    "clauses",
    "1.0.0",
    [
        (
            "split_clauses",
            split_clauses,
            obj({"text": STR}),
            obj(
                {
                    "status": {"type": "string", "enum": ["success", "no_clauses"]},
                    "clauses": {"type": "array", "items": _CLAUSE},
                    "clause_count": INT,
                    "preamble": STR,
                }
            ),
        ),
        ("match_clauses", match_clauses, _MATCH_IN, _MATCH_OUT),
        ("keyword_match", keyword_match, _MATCH_IN, _MATCH_OUT),
        (
            "score_risk",
            score_risk,
            obj({"findings": {"type": "array", "items": _FINDING}, "rules": {}}),
            obj(
                {
                    "status": STR,
                    "error": STR,
                    "level": {"type": "string", "enum": ["low", "medium", "high", "unknown"]},
                    "score": INT,
                    "missing_required": INT,
                    "red_flags": INT,
                    "reasons": {"type": "array", "items": STR},
                }
            ),
        ),
        (
            "compare_clauses",
            compare_clauses,
            obj(
                {
                    "previous": {"type": "array", "items": _CLAUSE},
                    "current": {"type": "array", "items": _CLAUSE},
                }
            ),
            obj(
                {
                    "status": {"type": "string", "enum": ["success", "no_clauses"]},
                    "added": {"type": "array", "items": obj({"number": STR, "title": STR})},
                    "removed": {"type": "array", "items": obj({"number": STR, "title": STR})},
                    "changed": {"type": "array", "items": {"type": "object"}},
                    "unchanged_count": INT,
                }
            ),
        ),
        (
            "describe_rules",
            describe_rules,
            obj({"rules": {}}),
            obj(
                {
                    "status": STR,
                    "error": STR,
                    "rule_count": INT,
                    "rules": {"type": "array", "items": {"type": "object"}},
                }
            ),
        ),
    ],
    probe=Probe(
        "match_clauses",
        {
            "clauses": [
                {
                    "number": "1",
                    "title": "Confidentiality",
                    "text": "Confidentiality\nThe parties keep this confidential.",
                }
            ],
            "rules": {
                "rules": [
                    {
                        "id": "probe",
                        "patterns": ["confidential"],
                        "unless": ["not confidential"],
                        "severity": "high",
                    }
                ]
            },
        },
        {"status": "success", "present_count": 1},
    ),
)
