"""Installed skills under ``$LAR_HOME/skills/`` and their lock file.

Each skill is copied to ``skills/<name>/``, and nothing Lar writes or deletes for a skill lies
outside that folder: the name must be a valid skill name (lowercase letters, digits, hyphens),
whether it comes from a SKILL.md, the command line or the lock file. A new copy is made beside
the old one and swapped in whole, so a failed install leaves the installed version as it was.
``skills/skills.lock`` records, per skill, where it
came from (folder, or git checkout and commit), the hash of its file manifest, its trust tier and
whether it is enabled. A skill whose files no longer match the lock is not loaded, and the
refusal names the files that changed: an installed skill is as untrusted as a new one once
something else has written to it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lar.skills.as_tool import find_cycle, skill_tools
from lar.skills.loader import LoadResult, scan_folder
from lar.skills.manifest import Problem, Skill, SkillError, name_problem
from lar.skills.optimizer import apply_overlay, overlay_path, read_overlay
from lar.skills.scan import Finding, scan_skill
from lar.skills.signing import (
    Tier,
    Verdict,
    file_manifest,
    key_id,
    load_public_key,
    manifest_hash,
    verify,
)
from lar.tools.base import Tool

__all__ = ["Installed", "SkillStore", "installed_skill_tools"]

LOCK_FILE = "skills.lock"
MAX_BYTES = 20 * 1024 * 1024


@dataclass(slots=True)
class Installed:
    """What ``install`` did for one skill found in the source."""

    name: str
    folder: Path
    verdict: Verdict
    findings: list[Finding]
    problems: list[Problem]
    replaced: bool = False


@dataclass(slots=True)
class Report:
    installed: list[Installed] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(source file or skill name, why) for each skill not installed."""


class SkillStore:
    def __init__(self, home: Path) -> None:
        self.root = home / "skills"
        self.keys = home / "keys"
        self.lock_file = self.root / LOCK_FILE

    # -- the lock file ---------------------------------------------------------------------

    def lock(self) -> dict[str, dict[str, Any]]:
        if not self.lock_file.exists():
            return {}
        try:
            data = json.loads(self.lock_file.read_text())
        except json.JSONDecodeError as exc:
            raise SkillError(
                f"{self.lock_file}: not valid JSON ({exc}); fix or remove it"
            ) from None
        except RecursionError:
            raise SkillError(f"{self.lock_file}: nested too deeply; fix or remove it") from None
        skills = data.get("skills") if isinstance(data, dict) else None
        if not isinstance(skills, dict):
            raise SkillError(f"{self.lock_file}: no 'skills' mapping; fix or remove it")
        for name, entry in skills.items():
            problem = name_problem(name)
            if problem is not None:
                raise SkillError(f"{self.lock_file}: skill entry {name!r}: {problem}; remove it")
            if not isinstance(entry, dict):
                raise SkillError(f"{self.lock_file}: skill entry {name!r} is not a mapping")
        return skills

    def folder(self, name: str) -> Path:
        """``skills/<name>/``, the one place Lar writes or deletes for skill ``name``. Raises
        ``SkillError`` for a name that is not a valid skill name, and for a folder that is a
        link to somewhere else."""
        problem = name_problem(name)
        if problem is not None:
            raise SkillError(problem)
        folder = self.root / name
        if folder.resolve().parent != self.root.resolve():
            raise SkillError(f"{folder} is a link to {folder.resolve()}; Lar does not follow it")
        return folder

    def _write_lock(self, skills: dict[str, dict[str, Any]]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        temp = self.lock_file.with_suffix(".tmp")
        temp.write_text(
            json.dumps({"version": 1, "skills": skills}, indent=2, sort_keys=True) + "\n"
        )
        os.replace(temp, self.lock_file)

    # -- trust -----------------------------------------------------------------------------

    def trusted_keys(self) -> dict[str, Tier]:
        keys: dict[str, Tier] = {}
        own = self.keys / "skills_ed25519.pub"
        if own.exists():
            keys[key_id(load_public_key(own))] = "own"
        for file in sorted((self.root / "trusted_keys").glob("*.pub")):
            keys.setdefault(key_id(load_public_key(file)), "trusted")
        return keys

    def trust_key(self, public_file: Path) -> str:
        kid = key_id(load_public_key(public_file))
        folder = self.root / "trusted_keys"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(public_file, folder / f"{kid}.pub")
        return kid

    # -- install ---------------------------------------------------------------------------

    def install(
        self,
        source: str,
        *,
        trust: bool = False,
        replace: bool = False,
        show: Callable[[str, list[Finding]], None] | None = None,
    ) -> Report:
        """Install every skill in ``source`` (a folder, or a git checkout with ``@REF``).

        A skill that is unsigned, signed by an unknown key, tampered with, or whose files show
        what ClawHavoc used is refused unless ``trust``; nothing from a skill is ever run here.
        ``show`` is given each skill's scan findings before anything of it is copied, trusted
        or not."""
        report = Report()
        with _checkout(source) as (folder, origin):
            results = scan_folder(folder)
            if not results:
                raise SkillError(f"{source}: no SKILL.md in it or in any folder below it")
            lock = self.lock()
            trusted = self.trusted_keys()
            batch = [r.skill for r in results if r.skill is not None]
            for result in results:
                others = [s for s in batch if result.skill is None or s.name != result.skill.name]
                try:
                    self._install_one(
                        result,
                        origin,
                        lock,
                        trusted,
                        report,
                        trust=trust,
                        replace=replace,
                        batch=others,
                        show=show,
                    )
                except (OSError, SkillError) as exc:
                    label = result.skill.name if result.skill else str(result.file)
                    report.refused.append((label, f"not installed: {exc}"))
            self._write_lock(lock)
        return report

    def _install_one(
        self,
        result: LoadResult,
        origin: dict[str, Any],
        lock: dict[str, dict[str, Any]],
        trusted: dict[str, Tier],
        report: Report,
        *,
        trust: bool,
        replace: bool,
        batch: list[Skill],
        show: Callable[[str, list[Finding]], None] | None,
    ) -> None:
        if result.skill is None:
            report.refused.append((str(result.file), "; ".join(str(p) for p in result.problems)))
            return
        skill = result.skill
        where = skill.folder
        target = self.folder(skill.name)
        if skill.name in lock and not replace:
            report.refused.append((skill.name, f"{skill.name!r} is installed; use --replace"))
            return
        size = sum(p.stat().st_size for p in where.rglob("*") if p.is_file())
        if size > MAX_BYTES:
            report.refused.append((skill.name, f"{where}: {size:,} bytes (limit {MAX_BYTES:,})"))
            return
        try:
            file_manifest(where)  # refuses symlinks before anything is copied
            verdict = verify(where, trusted)
        except SkillError as exc:
            report.refused.append((skill.name, str(exc)))
            return
        others = [s for s in self.loaded_skills(lock) if s.name != skill.name]
        cycle = find_cycle([*others, *batch, skill])
        if cycle:
            report.refused.append((skill.name, f"its steps form a cycle: {' → '.join(cycle)}"))
            return
        findings = scan_skill(where)
        if findings and show is not None:
            show(skill.name, findings)
        why = _untrusted_reason(verdict, findings)
        if why and not trust:
            report.refused.append((skill.name, why + "; install with --trust if you trust it"))
            return
        try:
            manifest = self._put(where, target)
        except (OSError, SkillError) as exc:
            kept = "the installed version is unchanged" if skill.name in lock else "nothing kept"
            report.refused.append((skill.name, f"could not copy it to {target} ({exc}); {kept}"))
            return
        tier: Tier = verdict.tier if verdict.intact else "untrusted"
        lock[skill.name] = {
            **origin,
            "path": str(where.relative_to(origin["root"])) if origin.get("root") else "",
            "hash": manifest_hash(manifest),
            "files": manifest,
            "tier": tier,
            "trusted_by_user": bool(why),
            "key_id": verdict.key_id,
            "enabled": lock.get(skill.name, {}).get("enabled", True),
            "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        lock[skill.name].pop("root", None)
        report.installed.append(
            Installed(skill.name, target, verdict, findings, result.problems, replaced=replace)
        )

    def _put(self, source: Path, target: Path) -> dict[str, str]:
        """Copy ``source`` to ``target`` (a ``folder``) and return its file manifest. The copy
        is made beside ``target`` and renamed into place; an old ``target`` is moved aside
        first and deleted only once the new one is in, or moved back if that fails."""
        staging = Path(tempfile.mkdtemp(prefix=".install-", dir=_mkdir(self.root)))
        try:
            new, old = staging / "new", staging / "old"
            shutil.copytree(source, new, ignore=shutil.ignore_patterns(".git"), symlinks=True)
            manifest = file_manifest(new)
            had = target.exists() or target.is_symlink()
            if had:
                os.replace(target, old)
            try:
                os.replace(new, target)
            except OSError:
                if had:
                    os.replace(old, target)
                raise
            return manifest
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def loaded_skills(self, lock: dict[str, dict[str, Any]]) -> list[Skill]:
        loaded = []
        for name in lock:
            folder = self.folder(name)
            results = scan_folder(folder) if folder.is_dir() else []
            loaded += [r.skill for r in results if r.skill is not None]
        return loaded

    def add_local(self, folder: Path, *, source: str, draft: bool) -> str:
        """Install a skill Lar made itself (a learned draft): your own tier, no signature
        needed; a draft stays disabled until ``set_enabled``."""
        skill = scan_folder(folder)[0].skill
        if skill is None:
            raise SkillError(f"{folder}: not a usable skill")
        lock = self.lock()
        target = self.folder(skill.name)
        if skill.name in lock or target.exists() or target.is_symlink():
            raise SkillError(f"{skill.name!r} is installed already")
        manifest = self._put(folder, target)
        lock[skill.name] = {
            "source": source,
            "hash": manifest_hash(manifest),
            "files": manifest,
            "tier": "own",
            "trusted_by_user": False,
            "key_id": "",
            "enabled": not draft,
            "draft": draft,
            "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        self._write_lock(lock)
        return skill.name

    def l3_lines(self) -> list[str]:
        """One line per installed skill for ``memory/L3_skills.md``."""
        lines = []
        for entry, result, changed in self.installed():
            about = result.skill.short() if result and result.skill else "unreadable"
            if changed:
                state = "changed since install, not loaded"
            elif entry.get("draft"):
                state = f"draft: review with `lar skill show {entry['name']}`"
            else:
                state = "enabled" if entry.get("enabled", True) else "disabled"
            lines.append(f"{entry['name']}: {about} ({state})")
        return lines

    # -- manage ----------------------------------------------------------------------------

    def set_enabled(self, name: str, enabled: bool) -> None:
        lock = self.lock()
        if name not in lock:
            raise SkillError(_unknown(name, lock))
        lock[name]["enabled"] = enabled
        if enabled:
            lock[name].pop("draft", None)  # enabling a draft is the review that accepts it
        self._write_lock(lock)

    def remove(self, name: str) -> None:
        folder = self.folder(name)
        lock = self.lock()
        if name not in lock:
            raise SkillError(_unknown(name, lock))
        shutil.rmtree(folder, ignore_errors=True)
        overlay_path(self.root, name).unlink(missing_ok=True)
        del lock[name]
        self._write_lock(lock)

    def check(self, name: str) -> list[str]:
        """The files of installed skill ``name`` that differ from the lock (empty: intact)."""
        folder = self.folder(name)
        entry = self.lock().get(name)
        if entry is None:
            raise SkillError(_unknown(name, self.lock()))
        return _differences(entry.get("files", {}), file_manifest(folder))

    def installed(self) -> list[tuple[dict[str, Any], LoadResult | None, list[str]]]:
        """Each locked skill: its lock entry, what loading it gave, and the files that changed."""
        out: list[tuple[dict[str, Any], LoadResult | None, list[str]]] = []
        for name, entry in sorted(self.lock().items()):
            try:
                folder = self.folder(name)
            except SkillError as exc:
                out.append(({"name": name, **entry}, None, [str(exc)]))
                continue
            if not (folder / "SKILL.md").exists():
                out.append(({"name": name, **entry}, None, ["SKILL.md (missing)"]))
                continue
            changed = _differences(entry.get("files", {}), file_manifest(folder))
            results = scan_folder(folder)
            out.append(({"name": name, **entry}, results[0] if results else None, changed))
        return out

    def enabled_skills(self) -> tuple[list[Skill], list[str]]:
        """The enabled, intact skills, and one line per skill left out and why."""
        skills: list[Skill] = []
        notes: list[str] = []
        for entry, result, changed in self.installed():
            if not entry.get("enabled", True) or entry.get("draft"):
                continue
            if changed:
                files = ", ".join(changed)
                notes.append(f"skill {entry['name']!r} not loaded: changed since install: {files}")
            elif result is None or result.skill is None:
                notes.append(f"skill {entry['name']!r} not loaded: no readable SKILL.md")
            else:
                overlay = read_overlay(self.root, result.skill.name)
                skills.append(apply_overlay(result.skill, overlay) if overlay else result.skill)
        return skills, notes


def _untrusted_reason(verdict: Verdict, findings: list[Finding]) -> str:
    if verdict.signed and not verdict.intact:
        return f"tampered: {verdict.describe()}"
    if not verdict.signed:
        reason = "unsigned"
    elif verdict.tier == "untrusted":
        reason = f"signed by an unknown key {verdict.key_id}"
    else:
        reason = ""
    if findings and verdict.tier not in ("own", "built-in"):
        found = f"{len(findings)} finding(s) of the install scan, first {findings[0]}"
        reason = f"{reason}; {found}" if reason else found
    return reason


def _differences(locked: dict[str, str], current: dict[str, str]) -> list[str]:
    changed = sorted(k for k in locked.keys() & current.keys() if locked[k] != current[k])
    changed += [f"{k} (added)" for k in sorted(current.keys() - locked.keys())]
    changed += [f"{k} (missing)" for k in sorted(locked.keys() - current.keys())]
    return changed


def _unknown(name: str, lock: dict[str, Any]) -> str:
    known = ", ".join(sorted(lock)) or "none"
    return f"no installed skill {name!r} (installed: {known})"


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def _checkout(source: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The folder to install from and how to record its origin. ``PATH@REF`` clones the git
    checkout at PATH (no network) and checks out REF in a temporary folder."""
    path_text, _, ref = source.partition("@") if not Path(source).exists() else (source, "", "")
    path = Path(path_text).expanduser().resolve()
    if not path.exists():
        raise SkillError(f"{path_text}: no such folder")
    is_git = (path / ".git").exists()
    if ref and not is_git:
        raise SkillError(f"{path_text}: @{ref} needs a git checkout, and this is not one")
    if not is_git:
        yield path, {"source": str(path), "root": path}
        return
    with tempfile.TemporaryDirectory(prefix="lar-skill-") as tmp:
        clone = Path(tmp) / "repo"
        _git("clone", "--quiet", "--no-hardlinks", str(path), str(clone))
        if ref:
            _git("-C", str(clone), "checkout", "--quiet", ref)
        commit = _git("-C", str(clone), "rev-parse", "HEAD")
        yield clone, {"source": f"git:{path}", "ref": ref, "commit": commit, "root": clone}


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=120, check=False
        )
    except FileNotFoundError:
        raise SkillError(
            "installing from a git checkout needs git, which is not installed"
        ) from None
    if done.returncode != 0:
        raise SkillError(f"git {' '.join(args[:3])}…: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip()


def installed_skill_tools(home: Path, available: Iterable[str]) -> tuple[list[Tool], list[str]]:
    """A tool per enabled, intact installed skill, and one line per skill left out and why.
    ``available`` names the agent's other tools (a skill's steps may call only those)."""
    store = SkillStore(home)
    if not store.lock_file.exists():
        return [], []
    try:
        skills, notes = store.enabled_skills()
    except SkillError as exc:
        return [], [f"no skills loaded: {exc}"]
    tools, left_out = skill_tools(skills, available)
    return list(tools), notes + left_out
