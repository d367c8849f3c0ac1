"""Corrupt or unreadable files (issue 16, Must show 3): one clear line, exit ≠ 0, no traceback,
the file untouched; `lar doctor --repair` moves a damaged database aside and keeps it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lar.memory.store import MemoryStore

COMMANDS = [["tasks"], ["memory", "list"], ["memory", "verify"], ["trace", "list"], ["run", "hi"]]
AS_NOBODY = Path(__file__).with_name("_as_nobody.py")


def lar(home: Path, *args: str, nobody: bool = False) -> subprocess.CompletedProcess[str]:
    env = {"LAR_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home.parent)}
    if nobody:
        # As root a mode-000 file is readable; the helper drops to uid 65534 once Lar's modules
        # are imported (the interpreter's own files may be under /root).
        argv = [sys.executable, str(AS_NOBODY), *args]
    else:
        argv = [sys.executable, "-m", "lar", *args]
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL
    )


@pytest.fixture
def home() -> Iterator[Path]:
    # Not tmp_path: pytest's folders are 0700 to root, and one case runs as nobody.
    base = Path(tempfile.mkdtemp(prefix="lar-corrupt-"))
    base.chmod(0o777)
    home = base / "home"
    home.mkdir()
    home.chmod(0o777)
    # A model that is never reached: every command must fail on the database first.
    (home / "config.yaml").write_text(
        "model: mock\nmodels:\n  - {name: mock, engine: openai, base_url: 'http://127.0.0.1:9/v1'}\n"
    )
    store = MemoryStore(home / "lar.db")
    for n in range(40):
        store.add(f"fact number {n} about tea and biscuits " * 4)
    store.close()
    yield home
    shutil.rmtree(base)


def _truncate(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])


def _garbage(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[:100] = b"\x07" * 100
    db.write_bytes(bytes(data))


def _directory(db: Path) -> None:
    db.unlink()
    db.mkdir()
    (db / "keep.txt").write_text("mine")


def _unreadable(db: Path) -> None:
    db.chmod(0)


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (_truncate, "is truncated"),
    "garbage header": (_garbage, "is not an SQLite database"),
    "directory": (_directory, "is a directory"),
    "no permission": (_unreadable, "is not readable and writable"),
}


def _reachable_by_others(path: Path) -> bool:
    """Whether every folder above ``path`` lets other users through (o+x), as the venv must be
    for the uid-65534 case; ``.ci/run`` makes its checkout so."""
    return all(p.stat().st_mode & 0o001 for p in [path, *path.parents])


def _snapshot(db: Path) -> object:
    if db.is_dir():
        return sorted((p.name, p.read_bytes()) for p in db.iterdir())
    return db.read_bytes() if os.access(db, os.R_OK) else db.stat().st_mtime_ns


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_damaged_database_gives_one_line_and_stays_untouched(
    home: Path, case: str, command: list[str]
) -> None:
    db = home / "lar.db"
    for side in ("lar.db-wal", "lar.db-shm"):
        (home / side).unlink(missing_ok=True)
    damage, says = CASES[case]
    nobody = case == "no permission" and os.geteuid() == 0
    if nobody and not _reachable_by_others(Path(sys.prefix)):
        pytest.skip(f"uid 65534 cannot reach {sys.prefix} (a parent folder is private)")
    damage(db)
    before = _snapshot(db)
    out = lar(home, *command, nobody=nobody)
    assert out.returncode not in (0, None), out
    assert "Traceback" not in out.stderr + out.stdout
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert str(db) in lines[0] and says in lines[0]
    assert _snapshot(db) == before  # nothing rewritten or "repaired"
    assert [p.name for p in home.iterdir() if p.name.startswith("lar.db")] == ["lar.db"]


def test_deeply_nested_config_gives_one_line(home: Path) -> None:
    config = home / "config.yaml"
    config.write_text("tools: " + "[" * 5000 + "]" * 5000 + "\n")
    before = config.read_bytes()
    for command in (["tasks"], ["run", "hi"], ["doctor", "--no-write"]):
        out = lar(home, *command)
        assert out.returncode == 2, out
        assert "Traceback" not in out.stderr
        assert out.stderr.strip().count("\n") == 0
        assert "nested deeper than" in out.stderr and str(config) in out.stderr
    assert config.read_bytes() == before


def test_doctor_finds_the_damage_and_repair_keeps_the_old_file(home: Path) -> None:
    db = home / "lar.db"
    healthy = lar(home, "doctor", "--no-write")
    assert healthy.returncode == 0 and "integrity ok" in healthy.stdout
    original = db.read_bytes()
    data = bytearray(original)
    page = 4096
    data[3 * page : 3 * page + 200] = b"\xff" * 200  # a damaged b-tree page, header intact
    db.write_bytes(bytes(data))
    damaged = lar(home, "doctor", "--no-write")
    assert damaged.returncode == 1
    assert "repair" in damaged.stdout and "integrity ok" not in damaged.stdout
    assert db.read_bytes() == bytes(data)  # doctor alone changes nothing

    fixed = lar(home, "doctor", "--no-write", "--repair")
    assert fixed.returncode == 0, fixed.stdout
    kept = [p for p in home.iterdir() if p.name.startswith("lar.db.corrupt-")]
    assert [p.read_bytes() for p in kept if not p.name.endswith(("-wal", "-shm"))] == [bytes(data)]
    assert lar(home, "tasks").returncode == 0  # a new, empty database works
