"""Roles in Lar's home: the installed ones (``$LAR_HOME/roles/NAME/agent.yaml``), a runner that
trusts the user's signing keys, and a role's health as data (for ``lar role status`` and the
panel)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lar.roles.machine import Notify, RoleRunner
from lar.roles.spec import Role, RoleFileError, load_role

__all__ = ["installed_roles", "runner_for", "role_health"]


def installed_roles(home: Path) -> list[tuple[Path, Role | RoleFileError]]:
    """Each installed role file with the role, or why it cannot be read."""
    folder = home / "roles"
    out: list[tuple[Path, Role | RoleFileError]] = []
    for file in sorted(folder.glob("*/agent.yaml")) if folder.is_dir() else []:
        try:
            out.append((file, load_role(file)))
        except RoleFileError as exc:
            out.append((file, exc))
    return out


def runner_for(
    role: Role, home: Path, *, engine: Any = None, notify: Notify | None = None
) -> RoleRunner:
    """A runner on ``home``'s ``lar.db`` that trusts your key and the keys you trusted."""
    from lar.skills import SkillStore

    home.mkdir(parents=True, exist_ok=True)
    return RoleRunner(
        role,
        home=home,
        db_path=home / "lar.db",
        trusted=SkillStore(home).trusted_keys(),
        engine=engine,
        notify=notify,
    )


def role_health(runner: RoleRunner, *, runs: int = 5) -> dict[str, Any]:
    """Readiness, each capability's probe, the breakers and the last runs of a role."""
    role = runner.role
    problems = []
    try:
        runner.store.db.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        problems.append(f"database: {exc}")
    for name in role.spec.data:
        if not role.data_path(name).is_file():
            problems.append(f"data {name}: {role.data_path(name)} is missing")
    now = time.time()
    return {
        "name": role.name,
        "version": role.spec.version,
        "role": " ".join(role.spec.role.split()),
        "live": True,
        "ready": not problems,
        "problems": problems,
        "capabilities": [
            {
                "name": c.name,
                "version": c.version,
                "source": c.source,
                "state": c.state,
                "reason": c.reason,
                "degraded": c.degraded,
            }
            for c in runner.status()
        ],
        "breakers": [
            {
                "step": step,
                "failures": failures,
                "open_for_s": None if opened is None else round(now - opened, 1),
            }
            for step, failures, opened in runner.breakers.all()
        ],
        "runs": [
            {
                "run_id": r.run_id,
                "outcome": r.outcome,
                "final_state": r.final_state,
                "started": r.started,
            }
            for r in runner.store.runs(role.name, limit=runs)
        ],
    }
