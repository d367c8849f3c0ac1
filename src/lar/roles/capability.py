"""Capabilities (D9, D10): named sets of role tools with a probe, built in or from a signed
package.

A package is a ``.tar.gz`` holding ``capability_manifest.yaml`` (name, version, description,
``permissions`` it needs, ``resources`` and ``requires`` — Python version and packages — the
``module`` with its tools, each tool's function, determinism and schemas, and a ``probe``: its
own minimal test case), the module, its data, and ``SIGNATURE.json``: the skills' Ed25519
signature over every file's hash (``lar role pack`` writes it with your key). Opening one checks,
in this order and before any of its code is imported: a safe archive (regular files only, no path
out of it), an intact signature by a key you trust (your own or one under
``skills/trusted_keys``), permissions the role grants, and requirements this machine meets. Its
module is imported on first use, and its probe runs then.

Permissions are declared and checked against the role's grant; the package's code runs inside
Lar's process, so what stands between it and your machine is the signature you chose to trust.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import shutil
import sys
import tarfile
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from lar.errors import LarError
from lar.roles.contracts import ContractError, ToolImpl, expand

__all__ = [
    "Capability",
    "CapabilityError",
    "Probe",
    "MANIFEST",
    "PERMISSIONS",
    "open_package",
    "pack",
    "run_probe",
]

MANIFEST = "capability_manifest.yaml"
PERMISSIONS = ("read_files", "write_files", "network", "subprocess")
MAX_ARCHIVE_BYTES = 50_000_000


class CapabilityError(LarError):
    pass


@dataclass(frozen=True)
class Probe:
    """A capability's minimal test case: call ``tool`` with ``input``; the output must contain
    ``expect`` (each key with that value)."""

    tool: str
    input: dict[str, Any]
    expect: dict[str, Any]


@dataclass
class Capability:
    name: str
    version: str
    tools: dict[str, ToolImpl]
    probe: Probe | None = None
    source: str = "built-in"
    permissions: tuple[str, ...] = ()
    loader: Callable[[], None] | None = None
    _loaded: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def loaded(self) -> bool:
        return self._loaded or self.loader is None

    def load(self) -> None:
        """Import the package's module (once); built-in capabilities are always loaded."""
        with self._lock:
            if self.loader is not None and not self._loaded:
                self.loader()
                self._loaded = True


def run_probe(cap: Capability) -> str | None:
    """None when the probe passes (or there is none), else why it failed."""
    if cap.probe is None:
        return None
    try:
        cap.load()
        impl = cap.tools.get(cap.probe.tool)
        if impl is None:
            return f"probe names tool {cap.probe.tool!r}, which {cap.name} does not have"
        out = impl.fn(dict(cap.probe.input))
    except Exception as exc:  # a probe reports every failure of the capability's own code
        return f"probe raised {type(exc).__name__}: {exc}"
    if not isinstance(out, Mapping):
        return f"probe returned {type(out).__name__}, not a mapping"
    wrong = {k: out.get(k) for k, v in cap.probe.expect.items() if out.get(k) != v}
    if wrong:
        return "probe got " + ", ".join(
            f"{k}={v!r} (expected {cap.probe.expect[k]!r})" for k, v in wrong.items()
        )
    return None


# -- packages ------------------------------------------------------------------------------


def _safe_extract(archive: Path, into: Path) -> None:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            total = 0
            for member in tar.getmembers():
                name = member.name
                if name.startswith("/") or ".." in Path(name).parts:
                    raise CapabilityError(f"{archive}: {name!r} points outside the package")
                if not (member.isfile() or member.isdir()):
                    raise CapabilityError(f"{archive}: {name!r} is not a plain file")
                total += member.size
                if total > MAX_ARCHIVE_BYTES:
                    raise CapabilityError(f"{archive}: larger than {MAX_ARCHIVE_BYTES} bytes")
            if hasattr(tarfile, "data_filter"):  # Python ≥ 3.11.4; the checks above suffice before
                tar.extractall(into, filter="data")
            else:  # pragma: no cover - older 3.11 patch releases
                tar.extractall(into)  # noqa: S202 - every member was checked above
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise CapabilityError(f"{archive}: not a readable .tar.gz ({exc})") from None


def _requirements(manifest: Mapping[str, Any], where: str) -> list[str]:
    problems = []
    requires = manifest.get("requires") or {}
    python = requires.get("python")
    if python:
        try:
            if not SpecifierSet(str(python)).contains(
                ".".join(map(str, sys.version_info[:3])), prereleases=True
            ):
                problems.append(f"needs Python {python}, this is {sys.version.split()[0]}")
        except InvalidSpecifier:
            problems.append(f"requires.python {python!r} is not a version specifier")
    for text in requires.get("packages") or []:
        try:
            req = Requirement(str(text))
        except InvalidRequirement:
            problems.append(f"requires.packages: {text!r} is not a requirement")
            continue
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            problems.append(f"needs the package {req} (not installed)")
            continue
        if req.specifier and not req.specifier.contains(have, prereleases=True):
            problems.append(f"needs {req}, installed {req.name} {have}")
    resources = manifest.get("resources") or {}
    memory_mb = resources.get("memory_mb")
    if memory_mb:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        if int(memory_mb) > total:
            problems.append(f"needs {memory_mb} MiB of memory, this machine has {total}")
    disk_mb = resources.get("disk_mb")
    if disk_mb:
        free = shutil.disk_usage(where).free // 2**20
        if int(disk_mb) > free:
            problems.append(f"needs {disk_mb} MiB of disk, {free} free")
    return problems


def _module_loader(
    folder: Path, module: str, cap: Capability, functions: dict[str, str]
) -> Callable[[], None]:
    def load() -> None:
        file = (folder / module).resolve()
        if folder.resolve() not in file.parents:
            raise CapabilityError(f"{cap.name}: module {module!r} is outside the package")
        name = f"lar_capability_{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            raise CapabilityError(f"{cap.name}: cannot import {module!r}")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for tool, fname in functions.items():
            fn = getattr(mod, fname, None)
            if not callable(fn):
                raise CapabilityError(
                    f"{cap.name}: {module} has no function {fname!r} (tool {tool})"
                )
            cap.tools[tool].fn = fn

    return load


def _lazy(cap_ref: list[Capability], tool: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def call(args: dict[str, Any]) -> dict[str, Any]:
        cap = cap_ref[0]
        cap.load()
        fn = cap.tools[tool].fn
        if fn is call:  # the loader did not replace it
            raise CapabilityError(f"{cap.name}: tool {tool} was not loaded")
        return fn(args)

    return call


def open_package(
    archive: Path,
    *,
    home: Path,
    trusted: Mapping[str, Any],
    grant: list[str] | tuple[str, ...] = (),
) -> Capability:
    """Verify ``archive`` and return its capability, not yet loaded (see the module doc)."""
    from lar.skills import SkillError
    from lar.skills import verify as verify_signature

    archive = Path(archive)
    if not archive.is_file():
        raise CapabilityError(f"{archive}: no such capability package")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    store = home / "capabilities"
    store.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=store))
    try:
        _safe_extract(archive, staging)
        try:
            verdict = verify_signature(staging, dict(trusted))
        except SkillError as exc:
            raise CapabilityError(f"{archive}: {exc}") from None
        if not verdict.signed:
            raise CapabilityError(f"{archive}: refused, unsigned (sign it with `lar role pack`)")
        if not verdict.intact:
            raise CapabilityError(f"{archive}: refused, tampered — {verdict.describe()}")
        if verdict.tier not in ("own", "trusted", "built-in"):
            raise CapabilityError(
                f"{archive}: refused, signed by an unknown key {verdict.key_id} (trust it with "
                "`lar skill trust KEY.pub`)"
            )
        try:
            manifest = yaml.safe_load((staging / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CapabilityError(f"{archive}: no {MANIFEST} in it") from None
        except yaml.YAMLError as exc:
            raise CapabilityError(f"{archive}: {MANIFEST} is not valid YAML ({exc})") from None
        if (
            not isinstance(manifest, dict)
            or not manifest.get("name")
            or not manifest.get("version")
        ):
            raise CapabilityError(f"{archive}: {MANIFEST} needs name: and version:")
        name, version = str(manifest["name"]), str(manifest["version"])
        permissions = [str(p) for p in manifest.get("permissions") or []]
        unknown = [p for p in permissions if p not in PERMISSIONS]
        if unknown:
            raise CapabilityError(
                f"{archive}: unknown permission(s) {', '.join(unknown)} "
                f"(known: {', '.join(PERMISSIONS)})"
            )
        missing = [p for p in permissions if p not in grant]
        if missing:
            raise CapabilityError(
                f"{archive}: {name} asks for {', '.join(missing)}, which the role does not grant "
                "(add them to the capability's `grant:` in the role file)"
            )
        problems = _requirements(manifest, str(store))
        if problems:
            raise CapabilityError(f"{archive}: {name} cannot run here: " + "; ".join(problems))
        final = store / f"{name}-{version}-{digest[:12]}"
        if not final.exists():
            os.replace(staging, final)
        else:
            shutil.rmtree(staging)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return _from_folder(
        final, manifest, f"package {archive.name} ({verdict.describe()})", tuple(permissions)
    )


def _from_folder(
    folder: Path, manifest: Mapping[str, Any], source: str, permissions: tuple[str, ...]
) -> Capability:
    name = str(manifest["name"])
    module = str(manifest.get("module") or "tools.py")
    ref: list[Capability] = []
    tools: dict[str, ToolImpl] = {}
    functions: dict[str, str] = {}
    for i, t in enumerate(manifest.get("tools") or []):
        if not isinstance(t, dict) or not t.get("name"):
            raise CapabilityError(f"{folder / MANIFEST}: tools[{i}] needs a name")
        tname = str(t["name"])
        try:
            inp = expand(t.get("input") or {}, f"{tname}.input")
            out = expand(t.get("output") or {}, f"{tname}.output")
        except ContractError as exc:
            raise CapabilityError(f"{folder / MANIFEST}: {exc}") from None
        functions[tname] = str(t.get("function") or tname)
        tools[tname] = ToolImpl(
            tname,
            _lazy(ref, tname),
            inp,
            out,
            determinism=str(t.get("determinism", "deterministic")),
            version=str(manifest["version"]),
            capability=name,
        )
    probe = manifest.get("probe")
    cap = Capability(
        name=name,
        version=str(manifest["version"]),
        tools=tools,
        probe=Probe(
            str(probe["tool"]), dict(probe.get("input") or {}), dict(probe.get("expect") or {})
        )
        if isinstance(probe, dict) and probe.get("tool")
        else None,
        source=source,
        permissions=permissions,
    )
    cap.loader = _module_loader(folder, module, cap, functions)
    ref.append(cap)
    return cap


def pack(folder: Path, key: Any, out: Path) -> Path:
    """Sign ``folder`` (SIGNATURE.json, the skills' format) and write it as ``out`` (.tar.gz)."""
    from lar.skills import sign

    folder = Path(folder)
    if not (folder / MANIFEST).is_file():
        raise CapabilityError(f"{folder}: no {MANIFEST}")
    sign(folder, key)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            if "__pycache__" in path.parts:
                continue
            info = tar.gettarinfo(str(path), arcname=path.relative_to(folder).as_posix())
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_file():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            elif path.is_dir():
                tar.addfile(info)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buf.getvalue())
    return out
