"""Capability packages: signed archives verified before any of their code is imported, loaded
on first use with their probe, refused when a byte changed, unsigned, signed by an unknown key,
asking for more than the role grants, or needing what the machine lacks."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from roles_helpers import lar

from lar.roles import CapabilityError, RoleFileError, RoleRunner, load_role, open_package, pack
from lar.skills import SkillStore, keygen, load_private_key

MANIFEST = """\
name: word-matcher
version: 1.2.0
description: counts a word in a text
permissions: [read_files]
resources: {memory_mb: 16, disk_mb: 1}
requires:
  python: ">=3.11"
  packages: ["pyyaml>=6"]
module: tools.py
tools:
  - name: count_word
    function: count
    determinism: deterministic
    input: {text: string, word: string}
    output: {status: string, hits: integer}
probe:
  tool: count_word
  input: {text: "a b a", word: a}
  expect: {hits: PROBE_HITS}
"""
TOOLS = """\
IMPORTED = True


def count(args):
    return {"status": "success", "hits": args["text"].split().count(args["word"])}
"""
ROLE = """\
name: counter
version: 1.0.0
role: Counts a word.
capabilities:
  - name: words
    package: word-matcher.tar.gz
    grant: [read_files]
    degraded: {count_word: count_simple}
  - name: fallback
    builtin: fallback
tools:
  count_word:
    input: {text: string, word: string}
    output: {status: string, hits: integer}
  count_simple:
    input: {text: string, word: string}
    output: {status: string, hits: integer}
pipelines:
  count:
    steps:
      - name: counting
        tool: count_word
        input: {text: $request.text, word: "the"}
states:
  COUNTING:
    run: count
    next: [{to: DONE}]
  DONE: {final: true}
start: COUNTING
report:
  fields: [counting.hits]
"""


def build(folder: Path, home: Path, *, probe_hits: int = 2, key_dir: Path | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "capability_manifest.yaml").write_text(
        MANIFEST.replace("PROBE_HITS", str(probe_hits))
    )
    (folder / "tools.py").write_text(TOOLS)
    keys = key_dir or home / "keys"
    if not (keys / "skills_ed25519").exists():
        keygen(keys)
    return pack(
        folder, load_private_key(keys / "skills_ed25519"), folder.parent / "word-matcher.tar.gz"
    )


def role_file(where: Path) -> Path:
    file = where / "agent.yaml"
    file.write_text(ROLE)
    return file


def fallback_caps():  # type: ignore[no-untyped-def]
    from lar.roles import Capability, ToolImpl

    schema_in = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "word": {"type": "string"}},
    }
    schema_out = {
        "type": "object",
        "properties": {"status": {"type": "string"}, "hits": {"type": "integer"}},
        "required": ["status", "hits"],
    }

    def simple(args):  # type: ignore[no-untyped-def]
        return {"status": "degraded", "hits": args["text"].count(args["word"])}

    return {
        "fallback": Capability(
            "fallback",
            "1",
            {"count_simple": ToolImpl("count_simple", simple, schema_in, schema_out)},
        )
    }


def runner_for(home: Path, where: Path) -> RoleRunner:
    return RoleRunner(
        load_role(role_file(where)),
        home=home,
        db_path=home / "lar.db",
        trusted=SkillStore(home).trusted_keys(),
        capabilities=fallback_caps(),
    )


def test_a_valid_package_loads_on_first_use_and_its_probe_runs(
    lar_home: Path, tmp_path: Path
) -> None:
    build(tmp_path / "src", lar_home)
    runner = runner_for(lar_home, tmp_path)
    cap = runner.capabilities["words"]
    assert not cap.loaded
    assert cap.tools["count_word"].fn.__name__ == "call"  # a stub that loads the module
    assert runner.health == {}  # nothing probed, nothing imported yet
    run = runner.run("the cat and the dog")
    assert cap.loaded and runner.health == {"words": None}
    assert cap.tools["count_word"].fn.__module__.startswith("lar_capability_")
    assert run.outcome == "completed" and run.result["fields"]["counting.hits"] == 2
    assert run.steps[0].component == "word-matcher/count_word@1.2.0"
    assert "signed by" in cap.source and "(own)" in cap.source


def test_a_package_with_one_byte_changed_is_refused_before_loading(
    lar_home: Path, tmp_path: Path
) -> None:
    archive = build(tmp_path / "src", lar_home)
    # a byte of a file changed inside a well-formed archive
    buf = io.BytesIO()
    with tarfile.open(archive, "r:gz") as src, tarfile.open(fileobj=buf, mode="w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if member.name == "tools.py":
                data = data.replace(b"IMPORTED = True", b"IMPORTED = Frue")  # type: ignore[union-attr]
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    archive.write_bytes(buf.getvalue())
    with pytest.raises(RoleFileError) as err:
        runner_for(lar_home, tmp_path)
    assert "refused, tampered — changed since signing: tools.py" in str(err.value)
    # a byte of the archive itself
    build(tmp_path / "src", lar_home)
    raw = bytearray(archive.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    archive.write_bytes(bytes(raw))
    with pytest.raises(CapabilityError, match="refused|not a readable"):
        open_package(
            archive,
            home=lar_home,
            trusted=SkillStore(lar_home).trusted_keys(),
            grant=["read_files"],
        )


def test_unsigned_unknown_key_ungranted_and_unmet_requirements_are_refused(
    lar_home: Path, tmp_path: Path
) -> None:
    trusted = SkillStore(lar_home).trusted_keys
    archive = build(tmp_path / "src", lar_home, key_dir=tmp_path / "stranger")
    with pytest.raises(CapabilityError, match="signed by an unknown key"):
        open_package(archive, home=lar_home, trusted=trusted(), grant=["read_files"])
    keygen(lar_home / "keys")
    archive = build(tmp_path / "src", lar_home)
    with pytest.raises(CapabilityError, match="asks for read_files, which the role does not grant"):
        open_package(archive, home=lar_home, trusted=trusted(), grant=[])
    (tmp_path / "src" / "SIGNATURE.json").unlink()
    unsigned = tmp_path / "unsigned.tar.gz"
    with tarfile.open(unsigned, "w:gz") as tar:
        tar.add(tmp_path / "src", arcname=".")
    with pytest.raises(CapabilityError, match="refused, unsigned"):
        open_package(unsigned, home=lar_home, trusted=trusted(), grant=["read_files"])
    (tmp_path / "src" / "capability_manifest.yaml").write_text(
        MANIFEST.replace("PROBE_HITS", "2").replace('"pyyaml>=6"', '"no-such-lar-package>=1"')
    )
    needy = pack(
        tmp_path / "src",
        load_private_key(lar_home / "keys" / "skills_ed25519"),
        tmp_path / "needy.tar.gz",
    )
    with pytest.raises(
        CapabilityError, match="cannot run here: needs the package no-such-lar-package>=1"
    ):
        open_package(needy, home=lar_home, trusted=trusted(), grant=["read_files"])


def test_status_shows_a_package_whose_probe_fails_as_unavailable(
    lar_home: Path, tmp_path: Path
) -> None:
    done = lar("skill", "keygen", home=lar_home)
    assert done.returncode == 0, done.stderr
    simple_manifest = (
        MANIFEST.replace("word-matcher", "word-simple")
        .replace("count_word", "count_simple")
        .split("probe:")[0]
    )
    for name, manifest in (
        ("word-matcher", MANIFEST.replace("PROBE_HITS", "3")),
        ("word-simple", simple_manifest),
    ):
        src = tmp_path / name
        src.mkdir()
        (src / "capability_manifest.yaml").write_text(manifest)
        (src / "tools.py").write_text(TOOLS)
        out = tmp_path / f"{name}.tar.gz"
        packed = lar("role", "pack", str(src), "--out", str(out), home=lar_home)
        assert packed.returncode == 0 and "(signed)" in packed.stdout, packed.stderr
    file = tmp_path / "agent.yaml"
    file.write_text(
        ROLE.replace(
            "    builtin: fallback\n",
            "    package: word-simple.tar.gz\n    grant: [read_files]\n",
        )
    )
    status = lar("role", "status", str(file), home=lar_home)
    assert status.returncode == 1, status.stdout + status.stderr
    assert "words 1.2.0: UNAVAILABLE — probe got hits=2 (expected 3)" in status.stdout
    assert "degraded: count_word → count_simple" in status.stdout
    assert "fallback 1.2.0: AVAILABLE" in status.stdout
    run = lar("role", "run", str(file), "the cat and the dog", "--plain", home=lar_home)
    assert run.returncode == 0, run.stderr
    assert "(degraded)" in run.stdout and "counting.hits: 2" in run.stdout
