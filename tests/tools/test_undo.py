"""Reversible changes (issue 16, Must show 5): 50 obfuscated destructive commands under
`shell: auto` and `code_run: auto`, each approved as a trusting user would; after each one
`lar undo` puts the workspace back byte for byte, and nothing outside it changed.

A pattern list cannot catch these (quoting, escapes, absolute paths, eval, sh -c, variables,
interpreters' delete functions, find -delete, truncation, dd, shred, redirection); the snapshot
taken before every run does not need to.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lar.cli.main import app
from lar.tools.base import ToolContext
from lar.tools.builtin import builtin_tools
from lar.tools.executor import ToolExecutor
from lar.tools.sandbox import isolation_level
from lar.types import ToolCall

SHELL = [
    "r''m -rf ~",
    "\\rm -rf ~",
    "/bin/rm -rf ~",
    "command rm -rf ~",
    "sh -c 'rm -rf ~'",
    'eval "rm -rf ~"',
    "X=rm; $X -rf .",
    "find ~ -delete",
    "find . -type f -delete",
    "ls | xargs rm -f",
    "shred -u a.txt",
    "truncate -s 0 a.txt",
    "dd if=/dev/zero of=a.txt bs=1 count=10",
    ": > a.txt",
    "echo gone > sub/b.txt",
    "cat /dev/null > bin.dat",
    "mv a.txt /tmp/a.txt",
    "rm -r sub",
    '"r"m -fr sub',
    "$(echo rm) -rf sub",
    "`echo rm` -rf .",
    "perl -e 'unlink glob \"*\"'",
    "bash -c 'rm -rf -- *'",
    "printf 'rm -rf .\\n' | sh",
    "echo cm0gLXJmIC4= | base64 -d | sh",
    "tar cf /dev/null --remove-files a.txt sub",
    "chmod -R 000 sub",
    "ln -sf /etc/passwd a.txt",
    "mkdir junk && for i in 1 2 3; do echo $i > junk/$i; done",
    "sed -i d a.txt",
    "python3 -c \"import shutil as s; s.rmtree('sub')\"",
    "cp /dev/null a.txt",
    "yes | head -c 100000 > big.txt",
    "find . -name '*.txt' -exec rm {} +",
    'set -- rm -rf .; "$@"',
]
PYTHON = [
    "import shutil as s\ns.rmtree('.', ignore_errors=True)",
    "import os\nos.system('rm -rf ~')",
    "import pathlib\n[p.unlink() for p in pathlib.Path('.').rglob('*') if p.is_file()]",
    "import os\n[os.remove(f) for f in os.listdir('.') if os.path.isfile(f)]",
    "open('a.txt', 'w').close()",
    "import subprocess\nsubprocess.run(['rm', '-rf', 'sub'])",
    "import os\nos.truncate('bin.dat', 0)",
    "getattr(__import__('os'), 'un' + 'link')('a.txt')",
    "exec(\"import shutil; shutil.rmtree('sub')\")",
    "import os\nos.rename('a.txt', 'renamed.txt')",
    "import os\nos.chmod('run.sh', 0)",
    "import os\nos.symlink('/etc', 'etc_link')",
    "open('sub/b.txt', 'a').write('x' * 1000)",
    "import shutil\nshutil.move('sub', 'moved')",
    "import os\nos.replace('bin.dat', 'sub/bin.dat')",
]

if isolation_level() != "bubblewrap" and not os.environ.get("CI"):
    pytest.skip("bubblewrap is not installed: code would run unconfined", allow_module_level=True)


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under ``root``: kind, mode, and bytes or link target."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            mode = oct(info.st_mode)
            if path.is_symlink():
                found[rel] = f"link {os.readlink(path)} {mode}"
            elif path.is_dir():
                found[rel] = f"dir {mode}"
            else:
                path.chmod(info.st_mode | 0o400)  # a test-made 000 file must still be hashed
                found[rel] = f"file {hashlib.sha256(path.read_bytes()).hexdigest()} {mode}"
                path.chmod(info.st_mode & 0o7777)
    return found


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    ws, home, lar_home, outside = (tmp_path / n for n in ("ws", "home", "larhome", "outside"))
    for d in (ws / "sub" / "deep", home, lar_home, outside):
        d.mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\n")
    (ws / "sub" / "b.txt").write_text("beta\n")
    (ws / "sub" / "deep" / "c.md").write_text("# gamma\n")
    (ws / "bin.dat").write_bytes(bytes(range(256)) * 4)
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "link").symlink_to("a.txt")
    (home / "notes.txt").write_text("the user's own file")
    (outside / "keep.txt").write_text("outside the workspace")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LAR_HOME", str(lar_home))
    return {"ws": ws, "home": home, "lar_home": lar_home, "outside": outside}


def test_undo_restores_the_workspace_after_each_destructive_command(
    world: dict[str, Path],
) -> None:
    ws = world["ws"]
    original = tree_digest(ws)
    around = {k: tree_digest(world[k]) for k in ("home", "outside")}
    executor = ToolExecutor(
        builtin_tools(),
        approver=lambda c, t: True,
        permissions={"shell": "auto", "code_run": "auto"},
    )
    ctx = ToolContext(workspace=ws, home=world["lar_home"])
    runner = CliRunner()
    ran = changed = 0
    try:
        for n, (tool, source) in enumerate(
            [("shell", c) for c in SHELL] + [("code_run", c) for c in PYTHON]
        ):
            args = {"command": source} if tool == "shell" else {"code": source}
            result = asyncio.run(executor.run(ToolCall(f"c{n}", tool, args), ctx))
            if "refused" in result.content:
                assert tree_digest(ws) == original, f"refused yet changed: {source}"
                continue
            ran += 1
            changed += tree_digest(ws) != original
            undone = runner.invoke(
                app, ["undo", "--workspace", str(ws)], env={"LAR_HOME": str(world["lar_home"])}
            )
            assert undone.exit_code == 0, (source, undone.output)
            assert tree_digest(ws) == original, f"not restored after: {source}"
    finally:
        executor.close()
    assert len(SHELL) + len(PYTHON) == 50
    assert ran >= 40, f"only {ran} of 50 ran: the test would prove little"
    assert changed >= 35, f"only {changed} commands changed the workspace"
    print(f"{ran} of 50 ran, {changed} changed the workspace, all undone")
    assert {k: tree_digest(world[k]) for k in ("home", "outside")} == around


def test_undo_says_when_there_is_nothing_to_undo(world: dict[str, Path]) -> None:
    out = CliRunner().invoke(
        app, ["undo", "--workspace", str(world["ws"])], env={"LAR_HOME": str(world["lar_home"])}
    )
    assert out.exit_code == 1 and "nothing to undo" in out.output


def test_lar_home_inside_the_workspace_survives_an_undo(world: dict[str, Path]) -> None:
    """Run from ~ with $LAR_HOME inside the workspace: undo neither copies nor removes it."""
    ws = world["home"]
    lar_home = ws / ".lar"
    lar_home.mkdir()
    (lar_home / "config.yaml").write_text("model: default\n")
    executor = ToolExecutor(builtin_tools(), approver=lambda c, t: True)
    ctx = ToolContext(workspace=ws, home=lar_home)
    try:
        asyncio.run(executor.run(ToolCall("c", "shell", {"command": "echo x > new.txt"}), ctx))
    finally:
        executor.close()
    assert (ws / "new.txt").exists()
    out = CliRunner().invoke(app, ["undo", "--workspace", str(ws)], env={"LAR_HOME": str(lar_home)})
    assert out.exit_code == 0, out.output
    assert not (ws / "new.txt").exists()
    assert (lar_home / "config.yaml").read_text() == "model: default\n"
    assert (ws / "notes.txt").read_text() == "the user's own file"
