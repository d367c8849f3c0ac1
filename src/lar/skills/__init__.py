"""Skills (K1–K6): SKILL.md folders read leniently, installed with a lock file, signed and
verified, offered to the model one line each and opened on demand, executable steps, skills
learned from verified work."""

from lar.skills.crystallize import Learned, learn_from_trace
from lar.skills.loader import LoadResult, load_skill, scan_folder
from lar.skills.manifest import Problem, Skill, SkillError, SkillStep
from lar.skills.optimizer import Overlay, Tuned, optimize, overlay_path, read_overlay
from lar.skills.scan import Finding, scan_skill
from lar.skills.signing import Verdict, keygen, load_private_key, sign, verify
from lar.skills.store import SkillStore, installed_skill_tools

__all__ = [
    "Overlay",
    "Tuned",
    "optimize",
    "overlay_path",
    "read_overlay",
    "Learned",
    "learn_from_trace",
    "Finding",
    "LoadResult",
    "Problem",
    "Skill",
    "SkillError",
    "SkillStep",
    "SkillStore",
    "Verdict",
    "keygen",
    "load_private_key",
    "load_skill",
    "scan_folder",
    "scan_skill",
    "sign",
    "verify",
    "installed_skill_tools",
]
