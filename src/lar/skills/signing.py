"""Ed25519 signatures over a manifest of every file's hash (K4).

``lar skill sign`` writes ``SIGNATURE.json`` into the skill folder: the manifest (each file's
SHA-256, by path), the signer's public key and the signature over the manifest's canonical JSON.
Verifying recomputes the manifest, so a refusal names the file that changed, appeared or went
missing, not just "bad signature". The signer's key decides the trust tier: Lar's own built-in
skills, your own key (``lar skill keygen``), a publisher key you trusted
(``$LAR_HOME/skills/trusted_keys/``), or untrusted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from lar.skills.manifest import SkillError

__all__ = [
    "SIGNATURE_FILE",
    "Verdict",
    "file_manifest",
    "key_id",
    "keygen",
    "load_private_key",
    "manifest_hash",
    "sign",
    "verify",
]

SIGNATURE_FILE = "SIGNATURE.json"
IGNORED_DIRS = {".git", "__pycache__"}
Tier = Literal["built-in", "own", "trusted", "untrusted"]


def file_manifest(folder: Path) -> dict[str, str]:
    """``{relative path: sha256}`` for every file under ``folder`` but the signature itself.

    A symlink is refused: what it points at could change without the manifest changing."""
    manifest: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        base = Path(dirpath)
        for d in dirnames:
            if (base / d).is_symlink():
                raise SkillError(f"{base / d}: a skill may not contain symlinks")
        for name in sorted(filenames):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if rel == SIGNATURE_FILE:
                continue
            if path.is_symlink():
                raise SkillError(f"{path}: a skill may not contain symlinks")
            if not path.is_file():  # a FIFO would block the read below for ever
                raise SkillError(f"{path}: not a regular file; a skill holds only files")
            manifest[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return manifest


def manifest_hash(manifest: dict[str, str]) -> str:
    return hashlib.sha256(_canonical(manifest)).hexdigest()


def _canonical(manifest: dict[str, str]) -> bytes:
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def keygen(keys_dir: Path) -> tuple[Path, str]:
    """A new signing key in ``keys_dir`` (private file mode 0600); refuses to overwrite one."""
    private_file = keys_dir / "skills_ed25519"
    if private_file.exists():
        raise SkillError(f"{private_file} exists; remove it first to make a new key")
    keys_dir.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(private_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    public = key.public_key()
    (keys_dir / "skills_ed25519.pub").write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private_file, key_id(public)


def load_private_key(file: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(file.read_bytes(), password=None)
    except FileNotFoundError:
        raise SkillError(f"{file}: no signing key (make one with `lar skill keygen`)") from None
    except ValueError as exc:
        raise SkillError(f"{file}: not a PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SkillError(f"{file}: not an Ed25519 key")
    return key


def load_public_key(file: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(file.read_bytes())
    except ValueError as exc:
        raise SkillError(f"{file}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SkillError(f"{file}: not an Ed25519 public key")
    return key


def sign(folder: Path, key: Ed25519PrivateKey) -> Path:
    manifest = file_manifest(folder)
    signature = key.sign(_canonical(manifest))
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    record = {
        "format": "lar-skill-signature/1",
        "key_id": key_id(key.public_key()),
        "public_key": base64.b64encode(raw).decode(),
        "signature": base64.b64encode(signature).decode(),
        "files": manifest,
    }
    out = folder / SIGNATURE_FILE
    out.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return out


@dataclass(slots=True)
class Verdict:
    """What ``verify`` found: the tier, the signer, and every file that differs from what was
    signed (empty when intact)."""

    tier: Tier
    signed: bool
    key_id: str = ""
    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def intact(self) -> bool:
        return self.signed and not (self.changed or self.added or self.removed or self.reason)

    def describe(self) -> str:
        if not self.signed:
            return "unsigned"
        parts = [f"changed since signing: {', '.join(self.changed)}"] if self.changed else []
        if self.added:
            parts.append(f"added since signing: {', '.join(self.added)}")
        if self.removed:
            parts.append(f"missing since signing: {', '.join(self.removed)}")
        if self.reason:
            parts.append(self.reason)
        if parts:
            return "; ".join(parts)
        return f"signed by {self.key_id} ({self.tier})"


def verify(folder: Path, trusted: dict[str, Tier]) -> Verdict:
    """Check ``folder`` against its ``SIGNATURE.json``; ``trusted`` maps key ids to tiers."""
    file = folder / SIGNATURE_FILE
    if not file.exists():
        return Verdict("untrusted", signed=False)
    try:
        record = json.loads(file.read_text())
        signed_files = {str(k): str(v) for k, v in record["files"].items()}
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(record["public_key"]))
        signature = base64.b64decode(record["signature"])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        return Verdict("untrusted", True, reason=f"{file}: unreadable signature ({exc})")
    kid = key_id(public)
    verdict = Verdict(trusted.get(kid, "untrusted"), True, kid)
    try:
        public.verify(signature, _canonical(signed_files))
    except InvalidSignature:
        verdict.reason = f"{SIGNATURE_FILE}: the signature does not match its file list"
        verdict.tier = "untrusted"
        return verdict
    current = file_manifest(folder)
    verdict.changed = sorted(
        k for k in current.keys() & signed_files.keys() if current[k] != signed_files[k]
    )
    verdict.added = sorted(current.keys() - signed_files.keys())
    verdict.removed = sorted(signed_files.keys() - current.keys())
    if not verdict.intact:
        verdict.tier = "untrusted"
    return verdict
