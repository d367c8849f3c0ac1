"""End to end on the embedded model: the contract pre-screen role, where the model only phrases
the report. Its structured result is the one the machine reaches without any model; a report the
model writes is kept only when the check finds it faithful, else the plain one is shown with the
reason."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from lar.config import load_config
from lar.engines import Engine, build_engine
from lar.engines.base import StreamChunk
from lar.roles import RoleRunner, load_role
from lar.types import Message, ToolSpec

ROLE = Path(__file__).resolve().parents[2] / "examples/roles/contract-prescreen/agent.yaml"
CONTRACTS = ROLE.parent / "contracts"


class Counting(Engine):
    """The embedded engine, counting the calls made to it."""

    def __init__(self, inner: Engine) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        self.calls += 1
        async for chunk in self.inner.stream(messages, tools, **params):
            yield chunk


def test_the_embedded_model_phrases_the_contract_report(lar_home: Path) -> None:
    role = load_role(ROLE)
    engine = Counting(build_engine(load_config()))
    phrased = RoleRunner(role, home=lar_home, db_path=lar_home / "lar.db", engine=engine)
    plain = RoleRunner(role, home=lar_home, db_path=lar_home / "lar.db")
    sources = {}
    contracts = sorted(CONTRACTS.glob("*.txt"))
    for contract in contracts:
        given = {"document": str(contract)}
        with_model = phrased.run("please screen this contract", given)
        without = plain.run("please screen this contract", given)
        assert with_model.path == without.path == ["RECEIVING_DOC", "PARSING", "GENERATING_REPORT"]
        assert with_model.result_hash == without.result_hash
        sources[contract.name] = with_model.report_source
        if with_model.report_source == "model":
            level = with_model.result["fields"]["risk.level"]
            assert level in with_model.report.casefold()
            assert with_model.report != without.report
        else:
            assert with_model.report_source.startswith("plain (model report replaced: ")
            assert with_model.report == without.report
    assert engine.calls == len(contracts) >= 3, sources
    assert "model" in sources.values(), sources
