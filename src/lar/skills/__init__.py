"""Skills (K1–K6): SKILL.md folders read leniently, installed with a lock file, signed and
verified, offered to the model one line each and opened on demand, executable steps, skills
learned from verified work."""

from lar.skills.loader import LoadResult, load_skill, scan_folder
from lar.skills.manifest import Problem, Skill, SkillError, SkillStep

__all__ = ["LoadResult", "Problem", "Skill", "SkillError", "SkillStep", "load_skill", "scan_folder"]
