"""The sandbox for code the model runs (B2).

Every run gets: the workspace as its only writable directory, a scrubbed environment, rlimits
(CPU seconds, address space, file size, no core dumps), a wall-clock limit that kills the whole
process group, capped output, and no network unless the policy allows it. How much more the
machine offers decides the isolation level, reported by ``isolation_level()`` and on every result:

- ``bubblewrap``: ``bwrap`` with new user, PID, IPC, UTS and network namespaces, all capabilities
  dropped, the system read-only, the home directory and denied paths hidden, a private /tmp, and
  a seccomp filter (where libseccomp is installed) that refuses ``ptrace``, reading or writing
  other processes' memory and the kernel interfaces a sandboxed program never needs;
- ``rlimits``: no bwrap; only the limits above apply (say so to the user).

Where the pids cgroup is writable (root on cgroup v1), a process cap (fork bombs) is added: as
root, RLIMIT_NPROC is not enforced by the kernel.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from lar.tools.bridge import BRIDGE_ENV, Bridge, bridge_pipes, serve

__all__ = [
    "Bridge",
    "BRIDGE_ENV",
    "SandboxPolicy",
    "SandboxResult",
    "isolation_level",
    "process_cap_available",
    "run_sandboxed",
    "Level",
]

Level = Literal["bubblewrap", "rlimits"]

_PIDS_ROOT = Path("/sys/fs/cgroup/pids")
_MEMORY_ROOT = Path("/sys/fs/cgroup/memory")

# Runs first inside the new process, still on the host: apply limits, join the pids cgroup,
# then exec the command (bwrap, or the program itself at the rlimits level). It is started with
# -I (no current directory or PYTHON* variables on its import path) from a directory of its own,
# so nothing in the workspace is ever imported here; it enters the workspace only to exec.
_LAUNCHER = """
import ctypes, json, os, resource, sys
cfg = json.loads(sys.argv[1])
# Die with Lar from the first moment, not only once bwrap runs (--die-with-parent): a Lar
# killed while this launcher starts would otherwise leave it to start the sandbox on its own.
ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
if os.getppid() != cfg["parent"]:
    os._exit(1)  # Lar died before the line above
for name, value in cfg["limits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
for group in cfg["cgroups"]:
    with open(group + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
os.chdir(cfg["cwd"])
os.execvpe(sys.argv[2], sys.argv[2:], cfg["env"])
"""
_LAUNCHER_DIR = Path("/")


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    workspace: Path
    timeout_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_size_mb: int = 64
    max_procs: int = 64
    disk_mb: int = 1024
    max_output: int = 8000
    network: bool = False
    denied_paths: tuple[Path, ...] = ()
    root: Path | None = None
    """A folder mounted at ``workspace`` instead of it (a staging copy, lar.tools.staging);
    bubblewrap only."""
    read_only: bool = False
    """The workspace mounted read-only and, by the syscall filter, no file opened for writing
    and no socket made (``code_read``): the program can read and print, nothing else;
    bubblewrap only."""


@dataclass(slots=True)
class SandboxResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    level: Level
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


@cache
def isolation_level() -> Level:
    """The strongest isolation this machine offers (probed once per process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "rlimits"
    probe = [bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return "bubblewrap" if ok else "rlimits"


def process_cap_available() -> bool:
    """Whether runs get a pids-cgroup process cap (root on cgroup v1 with a writable hierarchy)."""
    return os.access(_PIDS_ROOT, os.W_OK)


def _env(policy: SandboxPolicy) -> dict[str, str]:
    """Nothing from Lar's environment (API keys live there); only what programs need."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(policy.workspace),
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


def _bwrap_args(policy: SandboxPolicy, seccomp_fd: int | None = None) -> list[str]:
    ws = str(policy.workspace)
    args = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]
    if policy.network:
        args += ["--share-net", "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"]
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        args += ["--ro-bind-try", d, d]
    for f in (
        "ld.so.cache",
        "alternatives",
        "ssl",
        "passwd",
        "group",
        "nsswitch.conf",
        "localtime",
        "mime.types",
    ):
        args += ["--ro-bind-try", f"/etc/{f}", f"/etc/{f}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    home = Path.home()
    args += ["--tmpfs", str(home)]
    # The interpreter may live under the (now hidden) home directory, e.g. pyenv.
    for prefix in {sys.base_prefix, sys.prefix}:
        args += ["--ro-bind", prefix, prefix]
    args += ["--ro-bind" if policy.read_only else "--bind", str(policy.root or ws), ws]
    for denied in policy.denied_paths:
        if denied.is_dir():
            args += ["--tmpfs", str(denied)]
        elif denied.exists():
            args += ["--ro-bind", "/dev/null", str(denied)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", ws, "--"]
    return args


# Refused with EPERM inside the sandbox. ptrace and process_vm_* read other processes' memory;
# the rest are kernel interfaces (keyrings, BPF, perf, modules, mounts, swap, the kernel log) that
# code the model writes never needs and that widen the kernel's attack surface.
_BLOCKED_SYSCALLS = tuple(
    "ptrace process_vm_readv process_vm_writev perf_event_open bpf userfaultfd keyctl "
    "add_key request_key kexec_load kexec_file_load init_module finit_module "
    "delete_module mount umount2 pivot_root swapon swapoff syslog acct iopl ioperm "
    "personality".split()
)


@cache
def seccomp_filter(read_only: bool = False) -> bytes | None:
    """The compiled BPF program bwrap installs (``--seccomp``), or ``None`` where libseccomp is
    missing (the namespaces still apply; ``lar doctor`` says so). ``read_only`` (``code_read``)
    also refuses what a read-only mount lets through: opening any file for writing (a FIFO or
    a device in the workspace, a scratch file) and making sockets (a Unix socket in the
    workspace may lead to a shell elsewhere)."""
    try:
        import errno
        import tempfile

        import pyseccomp
    except (ImportError, OSError):  # the wheel, or libseccomp.so.2 it loads, is missing
        return None
    try:
        rules = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
        refuse = pyseccomp.ERRNO(errno.EPERM)
        for name in _BLOCKED_SYSCALLS + (_WRITING_SYSCALLS if read_only else ()):
            _rule(rules, refuse, name)
        for flag in (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC) if read_only else ():
            for name, arg in (("open", 1), ("openat", 2)):  # by the flags' bits
                _rule(rules, refuse, name, pyseccomp.Arg(arg, pyseccomp.MASKED_EQ, flag, flag))
        with tempfile.TemporaryFile() as out:
            rules.export_bpf(out)
            out.seek(0)
            return out.read()
    except (OSError, ValueError, RuntimeError):
        return None


_WRITING_SYSCALLS = ("creat", "openat2", "socket", "socketpair", "mknod", "mknodat")


def _rule(rules: Any, action: Any, name: str, *args: Any) -> None:
    try:
        rules.add_rule(action, name, *args)
    except (OSError, ValueError, RuntimeError):
        pass  # not a syscall on this architecture


def _seccomp_fd(read_only: bool = False) -> int | None:
    """A sealed in-memory file holding the filter, for bwrap to read; the caller closes it."""
    program = seccomp_filter(read_only)
    if program is None:
        return None
    fd = os.memfd_create("lar-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _limits(policy: SandboxPolicy) -> dict[str, int]:
    return {
        "RLIMIT_CPU": policy.cpu_s,
        "RLIMIT_AS": policy.memory_mb * 1024 * 1024,
        "RLIMIT_FSIZE": policy.file_size_mb * 1024 * 1024,
        "RLIMIT_CORE": 0,
        "RLIMIT_NPROC": policy.max_procs,  # enforced for non-root users only
    }


def _make_cgroups(policy: SandboxPolicy) -> list[Path]:
    """A pids group (process cap) and, where writable, a memory group: the limits then hold
    for the whole process tree, not per process (rlimits)."""
    _sweep_stale()
    name = f"lar-{os.getpid()}-{secrets.token_hex(4)}"
    made: list[Path] = []
    for root, knob, value in (
        (_PIDS_ROOT, "pids.max", policy.max_procs),
        (_MEMORY_ROOT, "memory.limit_in_bytes", policy.memory_mb * 1024 * 1024),
    ):
        if not os.access(root, os.W_OK):
            continue
        group = root / name
        try:
            group.mkdir()
            (group / knob).write_text(str(value))
        except OSError:
            _drop_cgroup(group)
            continue
        made.append(group)
    return made


@cache
def _sweep_stale() -> None:
    """Remove empty groups left by Lar processes that were killed (once per process); bwrap's
    --die-with-parent has already ended what ran in them."""
    for root in (_PIDS_ROOT, _MEMORY_ROOT):
        try:
            groups = list(root.glob("lar-*-*"))
        except OSError:
            continue
        for group in groups:
            try:
                owner = int(group.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if owner == os.getpid() or Path(f"/proc/{owner}").exists():
                continue
            # Only an empty group is removed: its owner may live in another PID namespace
            # (a container sharing this cgroup tree), and its processes are not ours to kill.
            try:
                group.rmdir()
            except OSError:
                pass


def _drop_cgroup(group: Path | None) -> None:
    if group is None or not group.exists():
        return
    for _ in range(50):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.02)  # killed processes take a moment to leave the group


async def _read_capped(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, int]:
    """Read everything (so the child never blocks on a full pipe) but keep only ``limit`` bytes."""
    if stream is None:
        return b"", 0
    kept = bytearray()
    total = 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        if len(kept) < limit:
            kept.extend(chunk[: limit - len(kept)])
    return bytes(kept), total


def _text(name: str, data: bytes, total: int) -> tuple[str, bool]:
    text = data.decode("utf-8", errors="replace")
    if total > len(data):
        return text + f"\n[{name} truncated: {total - len(data)} more bytes]", True
    return text, False


async def _watch_disk(policy: SandboxPolicy, pid: int) -> bool:
    """Kill the run's process group once the workspace's filesystem has lost more than
    ``disk_mb`` of free space since it started (a total over all files; rlimits only cap each
    file). Conservative: other writers on that disk count too. True if it killed the run."""
    limit = policy.disk_mb * 1024 * 1024
    try:
        start = _free_bytes(policy.root or policy.workspace)
        while True:
            await asyncio.sleep(0.005)  # a statvfs is a microsecond; page-cache writes are fast
            if start - _free_bytes(policy.root or policy.workspace) > limit:
                os.killpg(pid, signal.SIGKILL)
                return True
    except (OSError, ProcessLookupError):
        return False


def _free_bytes(path: Path) -> int:
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


@cache
def _not_dumpable() -> bool:
    """Make this process's memory unreadable to other processes of the same user
    (``/proc/PID/mem``, ptrace): it holds API keys, and at the rlimits level sandboxed code runs
    as this user in this PID namespace. Linux only; once per process."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(4, 0, 0, 0, 0) == 0)  # PR_SET_DUMPABLE, SUID_DUMP_DISABLE
    except (OSError, AttributeError):
        return False


async def run_sandboxed(
    argv: list[str], policy: SandboxPolicy, bridge: Bridge | None = None
) -> SandboxResult:
    """Run ``argv`` inside the sandbox; never raises for what the program does.

    ``bridge``: the program may send requests out (``BRIDGE_ENV`` names a pipe pair; no
    network, no shared files); each line it writes is answered by ``bridge`` in this process,
    while the sandbox's limits keep running."""
    _not_dumpable()
    level = isolation_level()
    if (policy.root is not None or policy.read_only) and level != "bubblewrap":
        what = "a staging root" if policy.root is not None else "a read-only workspace"
        raise ValueError(f"{what} needs bubblewrap (mount namespaces)")
    policy.workspace.mkdir(parents=True, exist_ok=True)
    env = _env(policy)
    pipes = bridge_pipes() if bridge is not None else None
    if pipes is not None:
        env[BRIDGE_ENV] = f"{pipes[1]},{pipes[2]}"
    groups = _make_cgroups(policy)
    cfg = {
        "limits": _limits(policy),
        "env": env,
        "cgroups": [str(g) for g in groups],
        "cwd": str(policy.workspace),
        "parent": os.getpid(),
    }
    seccomp = _seccomp_fd(policy.read_only) if level == "bubblewrap" else None
    command = (_bwrap_args(policy, seccomp) if level == "bubblewrap" else []) + argv
    passed = (() if seccomp is None else (seccomp,)) + (pipes[1:3] if pipes else ())
    try:
        proc = await _start(command, cfg, env, passed)
    except BaseException:
        if pipes is not None:
            os.close(pipes[0])
            os.close(pipes[3])
        raise
    finally:
        for fd in passed:
            os.close(fd)  # the child holds its own copies
    serving = None
    if pipes is not None and bridge is not None:
        serving = asyncio.ensure_future(serve(pipes[0], pipes[3], bridge))
    readers = asyncio.gather(
        _read_capped(proc.stdout, policy.max_output), _read_capped(proc.stderr, policy.max_output)
    )
    timed_out = False
    disk = asyncio.ensure_future(_watch_disk(policy, proc.pid))
    try:
        (out, out_total), (err, err_total) = await asyncio.wait_for(readers, policy.timeout_s)
        await asyncio.wait_for(proc.wait(), 5)
    except TimeoutError:
        timed_out = True
        out, out_total, err, err_total = b"", 0, b"", 0
    finally:
        disk.cancel()
        if serving is not None:
            serving.cancel()
            serving.add_done_callback(_retrieved)
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for group in groups:
            _drop_cgroup(group)
        if proc.returncode is None:
            await proc.wait()
        if not readers.done():
            readers.cancel()
        readers.add_done_callback(_retrieved)  # else asyncio logs "exception never retrieved"
    stdout, t1 = _text("stdout", out, out_total)
    stderr, t2 = _text("stderr", err, err_total)
    notes = [] if groups else ["no process cap (pids cgroup not writable)"]
    if disk.done() and not disk.cancelled() and disk.result():
        notes.append(f"stopped: wrote more than {policy.disk_mb} MB (tools.sandbox.disk_mb)")
        stderr += f"\n[stopped: the run wrote more than {policy.disk_mb} MB]"
    return SandboxResult(
        exit_code=None if timed_out else proc.returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        level=level,
        truncated=t1 or t2,
        notes=notes,
    )


async def _start(
    command: list[str], cfg: dict[str, Any], env: dict[str, str], pass_fds: tuple[int, ...]
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-c",
        _LAUNCHER,
        json.dumps(cfg),
        *command,
        cwd=_LAUNCHER_DIR,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
    )
