"""`lar eval` on the real embedded model, both tracks (issue 6, first step)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "evals" / "fixture_suite.jsonl"


def test_lar_eval_runs_a_suite_on_the_embedded_model(lar_home: Path, tmp_path: Path) -> None:
    out_json = tmp_path / "results.jsonl"
    out = subprocess.run(
        [sys.executable, "-m", "lar", "eval", "--suite", str(FIXTURE), "--category", "single",
         "--category", "abstain", "--track", "both", "--json", str(out_json)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        env={**os.environ, "LAR_HOME": str(lar_home), "COLUMNS": "200"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "default — native track" in out.stdout and "default — protocol track" in out.stdout
    rows = [json.loads(line) for line in out_json.read_text().splitlines()]
    results = {(r["track"], r["id"]): r for r in rows}
    assert set(results) == {(t, i) for t in ("native", "protocol") for i in ("w1", "a1")}
    assert all(r["tokens"] > 0 and r["latency_ms"] > 0 for r in rows)
    # The protocol track gets the weather call right (greedy decoding: deterministic) …
    protocol = results[("protocol", "w1")]
    assert protocol["ok"], protocol["why"]
    assert protocol["calls"][0][0] == "get_weather" and protocol["calls"][0][1]["city"] == "Lisbon"
    # (Whether the 1.5B abstains on a1 is not asserted: it does on about half such requests,
    # docs/evals.md; the run itself is what this test checks.)
    # The prompt footprint: system prompt and listing, counted by the model's tokenizer.
    assert "prompt footprint" in out.stdout
    assert protocol["parts"]["tools"] > 0 and protocol["parts"]["system"] > 0


def test_the_protocol_listing_of_ten_tools_fits_in_400_tokens(lar_home: Path) -> None:
    """Issue 6: ten tools listed for the protocol track in ≤ 400 tokens of the model's own
    tokenizer, every parameter still named, against their JSON Schemas."""
    import asyncio

    from lar.calling.prompt import protocol_system_prompt, signature, tool_listing
    from lar.config import load_config
    from lar.engines.factory import build_engine
    from lar.tools.builtin import BUILTIN_TOOLS

    tools = list(BUILTIN_TOOLS)[:10]
    listing = tool_listing(tools)
    block = protocol_system_prompt("", tools)
    schemas = json.dumps([t.openai_schema() for t in tools])
    for t in tools:
        assert signature(t) in listing
        assert all(f"{p}" in listing for p in t.parameters.get("properties", {}))
    engine = build_engine(load_config(), None)

    async def count() -> list[int] | None:
        try:  # one event loop: the HTTP connection is closed in the loop that opened it
            return await engine.count_tokens([listing, block, schemas])
        finally:
            await engine.aclose()

    counts = asyncio.run(count())
    assert counts is not None, "the embedded engine counts with the model's tokenizer"
    n_listing, n_block, n_schemas = counts
    assert n_listing <= 400, listing
    assert n_block - n_listing <= 150  # the reply line, the call format and the rules (135)
    assert n_schemas > 3 * n_listing
