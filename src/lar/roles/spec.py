"""The role file, ``agent.yaml`` (D1): what a deterministic role is, read like a job description.

A role names its tools with the contracts it expects of them (input and output JSON Schemas and a
determinism level), its pipelines (steps with timeouts, retries, a circuit breaker and a
fallback), its states and the guarded transitions between them, the intents that pick an entry
state, and the report the model may phrase. Every problem found while reading is reported with
the file and line it is on (``RoleFileError``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lar.config_errors import describe, node_for
from lar.errors import LarError

__all__ = [
    "Breaker",
    "CapabilityRef",
    "Check",
    "Contract",
    "Fallback",
    "Intent",
    "Pipeline",
    "Problem",
    "Report",
    "Role",
    "RoleFileError",
    "RoleSpec",
    "State",
    "Step",
    "Transition",
    "load_role",
]

Determinism = Literal["deterministic", "seeded", "nondeterministic"]
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect of a role file, where it is."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class RoleFileError(LarError):
    """A role file that cannot be used; ``problems`` lists every defect with its line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Breaker(_Model):
    failure_threshold: int = Field(5, ge=1)
    reset_timeout_ms: int = Field(60_000, ge=1)


class Fallback(_Model):
    strategy: Literal["tool", "stop"]
    """``tool``: run ``tool`` on the same input, its result marked degraded; ``stop``: end the run
    with what failed and why, nothing made up in its place."""
    tool: str | None = None
    notify: list[str] = []


class Check(_Model):
    """An external check of a step's output: ``tool`` (given ``input``, which may read the
    step's own output) must return what ``rule`` expects, read as ``check.FIELD``."""

    tool: str
    input: dict[str, Any] = {}
    rule: str


class Step(_Model):
    name: str
    tool: str
    input: dict[str, Any] = {}
    timeout_ms: int = Field(10_000, ge=1)
    max_retries: int = Field(0, ge=0, le=10)
    circuit_breaker: Breaker | None = None
    fallback: Fallback | None = None
    seed: int | None = None
    verify: list[str] = []
    """Rules the output must pass (guard expressions over this step's output)."""
    check: Check | None = None

    @field_validator("name")
    @classmethod
    def _ident(cls, value: str) -> str:
        if not _IDENT.match(value):
            raise ValueError("a step name is letters, digits and _ (it is used in guards)")
        return value


class Pipeline(_Model):
    description: str = ""
    steps: list[Step]


class Transition(_Model):
    to: str
    when: str | None = None
    """A guard over step outputs (``parsing.status == "success"``); none: always."""


class State(_Model):
    description: str = ""
    run: str | None = None
    """The pipeline this state runs."""
    next: list[Transition] = []
    final: bool = False


class Contract(_Model):
    """What the role expects of a tool: JSON Schemas for input and output, a determinism level."""

    description: str = ""
    determinism: Determinism = "deterministic"
    input: dict[str, Any] = {}
    output: dict[str, Any] = {}


class CapabilityRef(_Model):
    name: str
    builtin: str | None = None
    package: str | None = None
    grant: list[str] = []
    """Permissions the role grants the package (its manifest may ask for no more)."""
    degraded: dict[str, str] = {}
    """Tool → the tool used instead while this capability is UNAVAILABLE."""


class Intent(_Model):
    state: str
    description: str = ""
    examples: list[str] = []
    keywords: list[str] = []


class Report(_Model):
    fields: list[str] = []
    """References (``risk.level``) the report is made of."""
    must_state: list[str] = []
    """References whose values a phrased report must state (else it is replaced)."""
    instructions: str = ""


class RoleSpec(_Model):
    name: str
    version: str
    role: str
    memory_retention_days: int = Field(90, ge=1)
    capabilities: list[CapabilityRef] = []
    tools: dict[str, Contract] = {}
    data: dict[str, str] = {}
    """Named data files (rule tables, patterns), relative to the role file: ``$data.NAME``."""
    inputs: dict[str, str] = {}
    """What a run is given besides the request text (name → what it is): ``$request.NAME``."""
    pipelines: dict[str, Pipeline] = {}
    states: dict[str, State]
    start: str | None = None
    intents: dict[str, Intent] = {}
    intent_threshold: float = Field(0.6, gt=0, le=1)
    synonyms: str | dict[str, list[str]] | None = None
    report: Report = Report()


@dataclass
class Role:
    """A loaded role file: its settings, where it is, and the YAML nodes for line numbers."""

    spec: RoleSpec
    file: Path
    text: str
    root: yaml.Node | None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def folder(self) -> Path:
        return self.file.parent

    def line(self, *path: Any) -> int:
        """The line (1-based) of the key at ``path`` (the closest one that exists)."""
        node = node_for(self.root, tuple(path))
        return node.start_mark.line + 1 if node is not None else 1

    def problem(self, message: str, *path: Any) -> Problem:
        return Problem(self.file, self.line(*path), message)

    def data_path(self, name: str) -> Path:
        return (self.folder / self.spec.data[name]).resolve()

    def steps(self) -> dict[str, tuple[str, int, Step]]:
        """Every step by name: (pipeline, index, step)."""
        out: dict[str, tuple[str, int, Step]] = {}
        for pname, pipeline in self.spec.pipelines.items():
            for i, step in enumerate(pipeline.steps):
                out.setdefault(step.name, (pname, i, step))
        return out


def load_role(file: Path) -> Role:
    """Read and check the shape of a role file; RoleFileError names each defect's line."""
    file = Path(file)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RoleFileError([Problem(file, 1, "no such role file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RoleFileError([Problem(file, 1, f"cannot read it ({exc})")]) from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise RoleFileError([Problem(file, line, f"not valid YAML ({exc})")]) from None
    if not isinstance(data, dict):
        raise RoleFileError([Problem(file, 1, "a role file is a YAML mapping (name:, states: …)")])
    try:
        spec = RoleSpec.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            node = node_for(root, loc)
            line = node.start_mark.line + 1 if node is not None else 1
            where = ".".join(str(p) for p in loc)
            problems.append(Problem(file, line, f"{where}: {describe(RoleSpec, err)}"))
        raise RoleFileError(problems) from None
    return Role(spec, file.resolve(), text, root)
