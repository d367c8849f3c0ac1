"""Lar's built-in role capabilities: deterministic tools over plain text, domain knowledge in the
role's own data files (clause tables, log patterns) written by the domain expert.

``documents``: read_text. ``clauses``: split_clauses, match_clauses, keyword_match, score_risk,
describe_rules. ``logs``: parse_syslog, match_patterns, classify_incident, open_ticket,
read_tickets.
"""

from __future__ import annotations

from lar.roles.capability import Capability
from lar.roles.library.clauses import CLAUSES
from lar.roles.library.documents import DOCUMENTS
from lar.roles.library.logs import LOGS

__all__ = ["BUILTIN_CAPABILITIES"]

BUILTIN_CAPABILITIES: dict[str, Capability] = {c.name: c for c in (DOCUMENTS, CLAUSES, LOGS)}
