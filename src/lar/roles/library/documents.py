"""The ``documents`` capability: read a plain-text file as structured output, and check a file's
digest independently (``file_digest``, an external check for ``read_text``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from lar.roles.capability import Capability, Probe
from lar.roles.contracts import ToolImpl

__all__ = ["DOCUMENTS", "read_text"]

MAX_BYTES = 2_000_000


def _error(message: str) -> dict[str, Any]:
    return {"status": "error", "error": message, "text": "", "total_lines": 0, "sha256": ""}


def read_text(args: dict[str, Any]) -> dict[str, Any]:
    path = Path(str(args["path"])).expanduser()
    try:
        data = path.read_bytes()[: MAX_BYTES + 1]
    except OSError as exc:
        return _error(f"{path}: {exc.strerror or exc}")
    if len(data) > MAX_BYTES:
        return _error(f"{path}: larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    return {
        "status": "success",
        "error": "",
        "text": text,
        "total_lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def file_digest(args: dict[str, Any]) -> dict[str, Any]:
    """The file's SHA-256 and size, read again in chunks: an external check of ``read_text``."""
    path = Path(str(args["path"])).expanduser()
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 16):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        return {"status": "error", "sha256": "", "size": 0, "error": f"{path}: {exc.strerror}"}
    return {"status": "success", "sha256": digest.hexdigest(), "size": size, "error": ""}


_OUT = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["success", "error"]},
        "error": {"type": "string"},
        "text": {"type": "string"},
        "total_lines": {"type": "integer"},
        "sha256": {"type": "string"},
    },
    "required": ["status", "error", "text", "total_lines", "sha256"],
}

DOCUMENTS = Capability(
    name="documents",
    version="1.0.0",
    tools={
        "read_text": ToolImpl(
            "read_text",
            read_text,
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            _OUT,
            capability="documents",
            version="1.0.0",
        ),
        "file_digest": ToolImpl(
            "file_digest",
            file_digest,
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            {
                "type": "object",
                "properties": {
                    "status": {"type": "string"},
                    "sha256": {"type": "string"},
                    "size": {"type": "integer"},
                    "error": {"type": "string"},
                },
                "required": ["status", "sha256", "size", "error"],
            },
            capability="documents",
            version="1.0.0",
        ),
    },
    probe=Probe("read_text", {"path": "/nonexistent/lar-probe"}, {"status": "error"}),
)
