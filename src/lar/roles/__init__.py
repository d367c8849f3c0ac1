"""Deterministic roles (D1–D10): a role file (``agent.yaml``) describes states, pipelines of
tools with contracts, and intents; code decides every step, the model only phrases the report,
and every step is recorded in an evidence chain."""

from lar.roles.capability import Capability, CapabilityError, Probe, open_package, pack, run_probe
from lar.roles.contracts import ContractError, ToolImpl, check_registration
from lar.roles.diff import diff_roles
from lar.roles.home import installed_roles, role_health, runner_for
from lar.roles.intent import IntentMatch, IntentParser, load_synonyms, normalize
from lar.roles.machine import CapabilityHealth, RoleInputError, RoleRun, RoleRunner
from lar.roles.report import check_report
from lar.roles.spec import Problem, Role, RoleFileError, load_role
from lar.roles.store import RoleStore
from lar.roles.validate import validate

__all__ = [
    "Capability",
    "CapabilityError",
    "CapabilityHealth",
    "ContractError",
    "IntentMatch",
    "IntentParser",
    "Probe",
    "Problem",
    "Role",
    "RoleFileError",
    "RoleInputError",
    "RoleRun",
    "RoleRunner",
    "RoleStore",
    "ToolImpl",
    "check_registration",
    "check_report",
    "diff_roles",
    "installed_roles",
    "role_health",
    "runner_for",
    "load_role",
    "load_synonyms",
    "normalize",
    "open_package",
    "pack",
    "run_probe",
    "validate",
]
