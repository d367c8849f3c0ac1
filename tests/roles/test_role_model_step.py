"""A sampled model call is allowed only as a seeded step: the seed reaches the engine, and
without a model the capability is UNAVAILABLE and the step does not run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from lar.engines.base import StreamChunk
from lar.engines.scripted import ScriptedEngine
from lar.roles import RoleRunner, load_role, validate
from lar.types import Message, ToolSpec

ROLE = """\
name: drafter
version: 1.0.0
role: Drafts one sentence.
capabilities:
  - {name: model, builtin: model}
tools:
  model_text:
    determinism: seeded
    input: {prompt: string, seed: "integer?", temperature: "number?"}
    output: {text: string}
pipelines:
  draft:
    steps:
      - name: draft
        tool: model_text
        input: {prompt: $request.text, temperature: 0.8}
        seed: 42
states:
  DRAFTING:
    run: draft
    next: [{to: DONE}]
  DONE: {final: true}
start: DRAFTING
report:
  fields: [draft.text]
"""


class Recording(ScriptedEngine):
    def __init__(self, steps: list[str]) -> None:
        super().__init__(steps)
        self.params: list[dict[str, Any]] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **params: Any
    ) -> AsyncIterator[StreamChunk]:
        self.params.append(params)
        async for chunk in super().stream(messages, tools, **params):
            yield chunk


def test_a_seeded_step_sends_its_seed_to_the_model(lar_home: Path, tmp_path: Path) -> None:
    file = tmp_path / "agent.yaml"
    file.write_text(ROLE)
    assert validate(load_role(file)) == []
    engine = Recording(["The parties keep it secret."])
    runner = RoleRunner(load_role(file), home=lar_home, db_path=lar_home / "lar.db")
    runner.engine = engine  # the report is plain: draft.text is not a must-state field
    run = runner.run("draft a confidentiality sentence")
    assert engine.params[0]["seed"] == 42 and engine.params[0]["temperature"] == 0.8
    assert run.result["fields"]["draft.text"] == "The parties keep it secret."
    assert run.steps[0].component == "model/model_text@1.0.0"


def test_without_a_model_the_capability_is_unavailable_and_nothing_is_made_up(
    lar_home: Path, tmp_path: Path
) -> None:
    file = tmp_path / "agent.yaml"
    file.write_text(ROLE)
    runner = RoleRunner(load_role(file), home=lar_home, db_path=lar_home / "lar.db")
    run = runner.run("draft a sentence")
    assert run.outcome == "stopped" and "draft.text" not in run.result["fields"]
    assert (
        "capability model UNAVAILABLE (probe got ready=False (expected True))" in run.steps[0].error
    )
    file.write_text(ROLE.replace("        seed: 42\n", ""))
    messages = [p.message for p in validate(load_role(file))]
    assert any("is seeded; give the step a fixed `seed:`" in m for m in messages)
