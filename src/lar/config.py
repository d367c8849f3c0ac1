"""Configuration: ``$LAR_HOME/config.yaml`` (default ``~/.lar``), validated by pydantic.

Only this module reads configuration files and the environment. Values may use ``${VAR}`` or
``${VAR:-default}``. A bad file fails with one message that names the file, the line, the key
and what is allowed there. With no file at all, Lar runs the embedded default model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NoReturn

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from lar.config_agent import AgentSettings, RaySettings, SubAgentSettings
from lar.config_errors import describe, node_for
from lar.errors import ConfigError
from lar.safe_yaml import YamlTooComplex, check_shape

__all__ = [
    "AgentSettings",
    "SandboxSettings",
    "LarConfig",
    "MemorySettings",
    "ModelConfig",
    "CatalogOverride",
    "RouterSettings",
    "ServerSettings",
    "SchedulerSettings",
    "McpServerSettings",
    "IdleSettings",
    "NotifierSettings",
    "ToolsConfig",
    "load_config",
    "lar_home",
    "DEFAULT_MODEL_NAME",
]

BUILTIN_ENGINES = ("llamacpp", "openai")
"""Engine kinds Lar ships (lar.engines.factory); plugins add theirs to the engine registry."""

DEFAULT_MODEL_NAME = "default"
_SECRET_ENV = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)", re.I)
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _fail(message: str) -> NoReturn:
    raise ValueError(message)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class CatalogOverride(_Strict):
    """What the catalog says about a model, corrected or completed by the user (E5)."""

    params_b: float | None = Field(None, gt=0)
    context_length: int | None = Field(None, ge=256)
    native_tools: bool | None = None
    tags: list[Literal["code", "math", "reasoning", "thinking", "chat", "vision"]] | None = None
    price_in_per_m: float | None = Field(None, ge=0)
    """US dollars per million prompt tokens."""
    price_out_per_m: float | None = Field(None, ge=0)
    local: bool | None = None
    """Whether it runs on this machine or network (default: llamacpp, or a loopback/private
    base_url); the router only picks a non-local model when ``router.allow_cloud`` is true."""
    policies: list[str] | None = None
    """The model's profile: the policies (lar.agents.policies) its replies get."""


class ModelConfig(_Strict):
    """One model Lar can use: embedded (``llamacpp``) or any OpenAI-compatible endpoint."""

    name: str = Field(min_length=1)
    engine: str
    """llamacpp, openai, or a kind a plugin registered."""
    path: str | None = None
    """llamacpp: a GGUF file; empty means a bundled model (``package``)."""
    package: Literal["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"] | None = None
    """llamacpp: which bundled model to use when ``path`` is empty (default: the 1.5B)."""
    base_url: str | None = None
    model: str | None = None
    """openai: the model name the endpoint serves (defaults to ``name``)."""
    api_key: SecretStr | None = None
    n_ctx: int = Field(4096, ge=256, le=1_048_576)
    threads: int | None = Field(None, ge=1, le=256)
    prompt_cache: bool = True
    """llamacpp: keep the last prompt's KV cache in ``<home>/cache/prompts/`` (mode 0600, it
    holds the prompt's tokens), so the next process does not process the same system prompt
    and tool listing again."""
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=1, le=131_072)
    timeout_s: float = Field(120.0, gt=0)
    retries: int = Field(2, ge=0, le=10)
    track: Literal["auto", "native", "protocol", "constrained"] = "auto"
    options: dict[str, Any] = Field(default_factory=dict)
    """Free-form settings for a plugin engine."""
    catalog: CatalogOverride | None = None

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        from lar.registry import Registry

        allowed = sorted({*BUILTIN_ENGINES, *Registry.keys_of("engine")})
        if value not in allowed:
            raise ValueError(f"unknown engine {value!r}; allowed: {', '.join(allowed)}")
        return value

    @model_validator(mode="after")
    def _engine_fields(self) -> ModelConfig:
        if self.engine == "openai" and not self.base_url:
            raise ValueError("engine 'openai' needs base_url (e.g. http://127.0.0.1:8000/v1)")
        return self


class SandboxSettings(_Strict):
    """Limits for code the model runs (code_run, shell)."""

    network: bool = False
    cpu_s: int = Field(10, ge=1, le=3600)
    memory_mb: int = Field(1024, ge=64, le=65536)
    file_size_mb: int = Field(64, ge=1, le=65536)
    max_procs: int = Field(64, ge=4, le=4096)
    disk_mb: int = Field(1024, ge=1, le=1048576)
    """Bytes one run may write in all (its filesystem's free space is watched)."""
    denied_paths: list[str] = Field(default_factory=lambda: ["~/.ssh", "~/.gnupg", "~/.aws"])


class ToolsConfig(_Strict):
    allowlist: list[str] | None = None
    """Only these tools are shown to the model and allowed to run; empty/absent means all."""
    path: str | None = None
    """Directory of user tool modules; default ``$LAR_HOME/tools``."""
    credentials: dict[str, SecretStr] = Field(default_factory=dict)
    """What ``auth`` tools need, by tool name (use ``${ENV}``); never shown to the model."""
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    permissions: dict[str, Literal["auto", "confirm", "auth"]] = Field(default_factory=dict)
    """Policy overrides, e.g. ``{code_run: auto}``; dangerous commands still ask, hard-line
    ones are still refused."""
    extra: list[str] = Field(default_factory=list)
    """Built-in tools offered besides the default set (``code_read``: Python over the
    workspace, read-only, no network, asks no one); off until measured to help. ``calendar``,
    ``file_move`` and ``file_delete`` are in the default set (``calendar`` listed for a request
    that names a date, the other two never listed but run when the model calls them); naming
    them here changes nothing."""
    without: list[str] = Field(default_factory=list)
    """Built-in tools of the default set left out (``[convert_units]``): fewer tools in every
    prompt, or one arm of an ablation."""


class MemorySettings(_Strict):
    """Long-term memory (lar.db) and recall."""

    embedder: str | None = "all-minilm-l6-v2"
    """Sentence-embedding model for recall by meaning; null: BM25 only."""
    recall_k: int = Field(5, ge=1, le=50)
    threshold: float = Field(0.25, ge=-1.0, le=1.0)
    """Cosine similarity below which a memory is not recalled (empty beats wrong)."""
    retention_days: dict[Literal["preference", "fact", "task", "episode", "skill"], int | None] = (
        Field(default_factory=dict)
    )
    """Overrides of the default retention (preference 180, fact 90, task 7, episode 365 days;
    skill: kept); null keeps a type forever."""


class RouterSettings(_Strict):
    """Which model answers each request (L1–L4)."""

    policy: Literal["auto", "heuristic", "learned", "fixed"] = "auto"
    """auto: the learned policy once ``lar learn`` has trained one, else heuristic; fixed:
    always ``model``."""
    models: list[str] = Field(default_factory=list)
    """The models the router may pick; empty: ``model`` and every entry of ``models:``."""
    allow_cloud: bool = False
    """Local-first: a model that is not local is picked only when this is true (``model``
    itself is always allowed)."""
    min_samples: int = Field(5, ge=1, le=10_000)
    """Runs a model needs in a query class before the learned router trusts it there."""
    max_latency_s: float = Field(30.0, gt=0)
    """Reward (L4): a run this slow scores 0 on latency."""
    max_cost_usd: float = Field(0.01, gt=0)
    """Reward (L4): a run this expensive scores 0 on cost."""


DEFAULT_PORT = 8765
"""``lar serve``'s port unless ``server.port`` or ``--port`` says otherwise."""


class ServerSettings(_Strict):
    """``lar serve`` (I2, I3): loopback by default; any other address needs ``token``."""

    host: str = "127.0.0.1"
    port: int = Field(DEFAULT_PORT, ge=1, le=65535)
    token: SecretStr | None = None
    """The token every request carries (write ``${LAR_TOKEN}``); required to bind anything but
    loopback. Without it, Lar keeps a random one in ``$LAR_HOME/server.token`` (mode 0600)."""
    approvals: Literal["wait", "deny", "allow"] = "wait"
    """Calls that need a yes: wait for one (panel, ``/api/approvals``), deny them, or allow
    them all. The owner's choice: a request may ask for less (``deny``), never for more."""
    workspaces: list[Path] = Field(default_factory=list)
    """Folders besides the server's own (``lar serve --workspace``, else where it started) that
    a request may name as its workspace (``lar run`` sends its current folder); a request for
    any other folder is refused."""

    @field_validator("workspaces")
    @classmethod
    def _absolute(cls, folders: list[Path]) -> list[Path]:
        for folder in folders:
            if not folder.expanduser().is_absolute():
                raise ValueError(f"{str(folder)!r} is not an absolute folder")
        return [f.expanduser() for f in folders]

    cors_origins: list[str] = Field(default_factory=list)
    """Origins a browser may call the API from (none: CORS off)."""
    max_body_kb: int = Field(1024, ge=1, le=1_048_576)
    approval_timeout_s: float = Field(300.0, gt=0, le=86_400)
    """How long a call that needs a yes waits for one; then it is denied."""
    max_sessions: int = Field(1000, ge=1, le=1_000_000)
    """Sessions kept in memory; the least recently used goes first (its memories stay)."""


class SkillSettings(_Strict):
    """Skills (K1–K6) in ``$LAR_HOME/skills/`` (``lar skill``)."""

    enabled: bool = True
    """Offer the installed, enabled skills to the model (one tool each)."""
    learn: bool = True
    """Draft a skill from each task that succeeded with ``learn_min_calls`` tool calls or more."""
    learn_min_calls: int = Field(5, ge=2, le=100)
    enable_learned: bool = False
    """Enable learned skills at once instead of keeping them as drafts for review."""


class NotifierSettings(_Strict):
    """Where fired jobs are announced besides the inbox: ``desktop`` or a ``webhook``."""

    kind: Literal["desktop", "webhook"]
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _url(self) -> NotifierSettings:
        return self if self.kind != "webhook" or self.url else _fail("a webhook needs url")


class IdleSettings(_Strict):
    """Idle mode: off unless enabled; only the listed reviewed actions (lar.agents.idle)."""

    enabled: bool = False
    after_minutes: float = Field(30.0, gt=0, le=10_080)
    actions: list[Literal["consolidate_memory", "summarize_notes"]] = Field(default_factory=list)


class SchedulerSettings(_Strict):
    """Jobs (``lar schedule``), run by ``lar serve`` or ``lar schedule run``."""

    timezone: str | None = None
    """IANA zone for schedules (none: this machine's, or ``TZ``)."""
    missed: Literal["once", "skip"] = "once"
    """A job whose time passed while no scheduler ran: run it once on wake, or skip it."""
    notify: list[NotifierSettings] = Field(default_factory=list)
    idle: IdleSettings = Field(default_factory=IdleSettings)


class McpServerSettings(_Strict):
    """One MCP server (I5): ``command`` (stdio) or ``url`` (Streamable HTTP)."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    permission: Literal["auto", "confirm", "auth"] = "confirm"
    """Of each of its tools unless ``tools`` names it."""
    tools: dict[str, Literal["auto", "confirm", "auth"]] = Field(default_factory=dict)
    timeout_s: float = Field(30.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) != (self.url is None):
            return self
        _fail("give either command (stdio) or url (Streamable HTTP)")


class LarConfig(_Strict):
    model: str = DEFAULT_MODEL_NAME
    fallbacks: list[str] = Field(default_factory=list)
    models: list[ModelConfig] = Field(default_factory=list)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    router: RouterSettings = Field(default_factory=RouterSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    skills: SkillSettings = Field(default_factory=SkillSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    executor: Literal["local", "ray"] = "local"
    """Where a batch's requests and a delegate's parallel sub-agents run (Z2); ``ray`` needs
    ``pip install 'lar[ray]'``."""
    ray: RaySettings = Field(default_factory=RaySettings)
    agents: dict[str, SubAgentSettings] = Field(default_factory=dict)
    """Named sub-agents for ``agent.kind: delegate``."""
    mcp: dict[str, McpServerSettings] = Field(default_factory=dict)
    """MCP servers by name; their tools are named ``<server>.<tool>``."""
    home: Path = Field(default_factory=lambda: lar_home(), exclude=True)

    @model_validator(mode="after")
    def _known_models(self) -> LarConfig:
        names = [m.name for m in self.models]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"duplicate model names: {', '.join(sorted(dupes))}")
        known = self.model_names()
        named = [
            ("model", self.model),
            *(("fallbacks", f) for f in self.fallbacks),
            *(("router.models", r) for r in self.router.models),
        ]
        for key, value in named:
            if value not in known:
                raise ValueError(f"{key}: unknown model {value!r}; known: {', '.join(known)}")
        return self

    @model_validator(mode="after")
    def _known_members(self) -> LarConfig:
        for name in self.agent.members or ():
            if name not in self.agents:
                known = ", ".join(self.agents) or "none (define them under agents:)"
                raise ValueError(f"agent.members: no sub-agent {name!r}; known: {known}")
        for name, sub in self.agents.items():
            if sub.model is not None and sub.model not in self.model_names():
                known = ", ".join(self.model_names())
                raise ValueError(
                    f"agents.{name}.model: unknown model {sub.model!r}; known: {known}"
                )
        return self

    def model_named(self, name: str) -> ModelConfig:
        for m in self.models:
            if m.name == name:
                return m
        if name == DEFAULT_MODEL_NAME:
            return ModelConfig(name=DEFAULT_MODEL_NAME, engine="llamacpp")
        known = ", ".join(self.model_names())
        raise ConfigError(f"unknown model {name!r}; known: {known}", key="model")

    def model_names(self) -> list[str]:
        """Every model name a run may use, each once: the embedded default (which a configured
        model may override) and the configured ones."""
        return list(dict.fromkeys([DEFAULT_MODEL_NAME, *(m.name for m in self.models)]))

    def candidates(self) -> list[str]:
        """The models the router chooses among: ``router.models``, else ``model`` and every
        configured one."""
        if self.router.models:
            return list(dict.fromkeys(self.router.models))
        return list(dict.fromkeys([self.model, *(m.name for m in self.models)]))

    def secrets(self, env: Mapping[str, str] | None = None) -> list[str]:
        """Values that must never appear in output: configured API keys and secret-looking
        environment variables (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``)."""
        env = os.environ if env is None else env
        found = [m.api_key.get_secret_value() for m in self.models if m.api_key]
        found += [c.get_secret_value() for c in self.tools.credentials.values()]
        if self.server.token is not None:
            found.append(self.server.token.get_secret_value())
        for server in self.mcp.values():
            found += [
                v.get_secret_value() for v in (*server.env.values(), *server.headers.values())
            ]
        found += [v.get_secret_value() for n in self.scheduler.notify for v in n.headers.values()]
        found += [v for k, v in env.items() if _SECRET_ENV.search(k) and len(v) >= 8]
        return found

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def tools_dir(self) -> Path:
        return Path(self.tools.path).expanduser() if self.tools.path else self.home / "tools"


def lar_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("LAR_HOME") or "~/.lar").expanduser()


def _interpolate(value: Any, path: str, env: Mapping[str, str], where: str) -> Any:
    if isinstance(value, dict):
        return {
            k: _interpolate(v, f"{path}.{k}" if path else str(k), env, where)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_interpolate(v, f"{path}[{i}]", env, where) for i, v in enumerate(value)]
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            var, default = m.group(1), m.group(2)
            if var in env:
                return env[var]
            if default is not None:
                return default
            raise ConfigError(
                f"{where}: {path}: environment variable {var} is not set "
                f"(set it, or write ${{{var}:-default}})",
                file=where,
                key=path,
            )

        return _ENV_RE.sub(sub, value)
    return value


MAX_DEPTH = 32
"""Deeper nesting is refused before composing: PyYAML's composer recurses once per level."""


def load_config(
    path: Path | None = None,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> LarConfig:
    """Read and validate the config; a missing file gives the defaults."""
    env = os.environ if env is None else env
    home = home or lar_home(env)
    path = path or home / "config.yaml"
    extra: dict[str, Any] = {"home": home}
    if not path.exists():
        return LarConfig(**extra)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read: {exc}", file=where) from exc
    try:
        check_shape(text, where, max_depth=MAX_DEPTH)
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except YamlTooComplex as exc:
        raise ConfigError(
            f"{exc}; a Lar config needs a few levels, write the values out", file=where
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}{line}: invalid YAML: {problem}", file=where) from exc
    if data is None:
        return LarConfig(**extra)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where}:1: the file must be a mapping of keys (model:, models:, agent:, tools:), "
            f"not a {type(data).__name__}",
            file=where,
        )
    data = _interpolate(data, "", env, where)
    try:
        return LarConfig.model_validate({**data, **extra})
    except ValidationError as exc:
        lines = []
        first_key = None
        for err in exc.errors():
            loc = tuple(err["loc"])
            key = ".".join(str(p) for p in loc) or "(top level)"
            first_key = first_key or key
            node = node_for(root, loc)
            line = f":{node.start_mark.line + 1}" if node is not None else ""
            lines.append(f"{where}{line}: {key}: {describe(LarConfig, err)}")
        raise ConfigError("\n".join(lines), file=where, key=first_key) from None
