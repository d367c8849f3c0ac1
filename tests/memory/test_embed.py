"""The numpy MiniLM gives sentence-transformers' vectors, and the cache never encodes twice."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from lar.db import connect
from lar.memory.embed import CachedEmbedder, EmbedderMissing, MiniLMEmbedder, _verify, minilm_dir
from lar.memory.store import NewMemory

REFERENCE = Path(__file__).with_name("fixtures") / "minilm_reference.json"


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_vectors_equal_sentence_transformers_output(minilm: MiniLMEmbedder) -> None:
    ref = json.loads(REFERENCE.read_text())
    expected = np.stack(
        [np.frombuffer(base64.b64decode(b), dtype="<f4") for b in ref["vectors_f32_b64"]]
    )
    got = minilm.encode(ref["texts"])
    assert got.shape == expected.shape == (12, 384)
    assert np.abs(got - expected).max() < 2e-6
    cos = (got * expected).sum(1)
    assert cos.min() > 0.999999
    # The long texts really were cut at 256 tokens, as sentence-transformers does.
    assert minilm.tokens(ref["texts"][10]) == 256


def test_batching_does_not_change_a_vector(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a much longer sentence that pads the short one in its batch", "mid one"]
    together = minilm.encode(texts)
    alone = np.stack([minilm.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-6


def test_cache_encodes_each_text_once_across_instances(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    db = connect(tmp_path / "lar.db", "")
    first = CachedEmbedder(minilm, db)
    a = first.encode(["tea", "coffee", "tea"])
    assert first.encoded == 2
    second = CachedEmbedder(minilm, connect(tmp_path / "lar.db", ""))
    b = second.encode(["coffee", "tea", "water"])
    assert second.encoded == 1  # only "water" is new
    assert np.array_equal(a[0], b[1]) and np.array_equal(a[1], b[0])


def test_a_tampered_weights_file_is_refused(tmp_path: Path) -> None:
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_bytes((minilm_dir() / name).read_bytes())
    stamp = tmp_path / "ok.stamp"
    _verify(tmp_path, stamp)
    assert stamp.exists()
    data = bytearray((tmp_path / "tokenizer.json").read_bytes())
    data[100] ^= 1
    (tmp_path / "tokenizer.json").write_bytes(bytes(data))
    with pytest.raises(EmbedderMissing, match=r"tokenizer.json has SHA-256 .* not the pinned"):
        _verify(tmp_path, stamp)  # mtime changed, so the stamp does not vouch for it


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(EmbedderMissing, match="model.safetensors is missing; install it with"):
        _verify(tmp_path, None)


def test_the_multilingual_embedder_recalls_portuguese_by_meaning(tmp_path: Path) -> None:
    """use-multilingual-v3 (installed by install.sh): Portuguese questions find the memory that
    answers each though they share no word; the English-only MiniLM misses some. Its cosines run
    lower, so it is used with a lower threshold (README: memory.threshold 0.15)."""
    from lar.memory.embed import USE_MULTILINGUAL, build_embedder
    from lar.memory.recall import recall
    from lar.memory.store import MemoryStore

    facts = [
        "Tenho alergia a amendoins.",
        "O carro foi ao mecânico por causa dos travões.",
        "Amanhã tenho consulta no dentista às dez.",
        "A minha irmã trabalha num hospital em Braga.",
    ]
    questions = [  # the same order: each answered by that fact
        "Que frutos secos não posso comer?",
        "Qual é o problema do automóvel?",
        "Quando é que vou ao médico dos dentes?",
        "Onde é o emprego dela, da minha mana?",
    ]
    right = {}
    for name in (USE_MULTILINGUAL, "all-minilm-l6-v2"):
        embedder = build_embedder(name, tmp_path)
        store = MemoryStore(tmp_path / f"{name}.db", embedder)
        ids = store.add_many([NewMemory(f) for f in facts])
        top = [recall(store, q, k=1, threshold=0.15, log_it=False) for q in questions]
        right[name] = sum(bool(t) and t[0].record.id == i for t, i in zip(top, ids, strict=True))
        store.close()
    assert right[USE_MULTILINGUAL] == 4 and right["all-minilm-l6-v2"] < 4
