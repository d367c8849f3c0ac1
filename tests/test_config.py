import re
from pathlib import Path
from typing import Any

import pytest

from lar.config import LarConfig, load_config
from lar.errors import ConfigError


def write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text)
    return path


def test_no_config_means_embedded_default(lar_home: Path) -> None:
    config = load_config()
    assert config.home == lar_home
    assert config.model == "default"
    assert config.model_named("default").engine == "llamacpp"
    assert config.agent.max_turns == 8


def test_valid_config_with_env_interpolation(lar_home: Path) -> None:
    write(
        lar_home,
        "model: local\n"
        "models:\n"
        "  - name: local\n"
        "    engine: openai\n"
        "    base_url: http://127.0.0.1:${PORT:-8080}/v1\n"
        "    api_key: ${MY_KEY}\n"
        "agent:\n  max_turns: 4\n",
    )
    config = load_config(env={"LAR_HOME": str(lar_home), "MY_KEY": "sk-secret"})
    m = config.model_named("local")
    assert m.base_url == "http://127.0.0.1:8080/v1"
    assert m.api_key is not None and m.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(config)
    assert config.agent.max_turns == 4


def test_bad_value_names_file_line_key_and_allowed_values(lar_home: Path) -> None:
    path = write(lar_home, "models:\n  - name: x\n    engine: ollama\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    msg = str(info.value)
    assert msg.startswith(f"{path}:3: models.0.engine:")
    assert "unknown engine 'ollama'; allowed: llamacpp, openai" in msg


def test_unknown_key_lists_allowed_keys(lar_home: Path) -> None:
    path = write(lar_home, "agent:\n  max_turn: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert str(info.value) == (
        f"{path}:2: agent.max_turn: unknown key 'max_turn'; "
        "allowed keys: max_turns, system_prompt, workspace, off_topic_below, policies, "
        "name_the_language, accounts_in_language, tool_listing_every, max_messages, "
        "token_budget, time_budget_s, kind, name, max_parallel, members"
    )


def test_out_of_range_number(lar_home: Path) -> None:
    path = write(lar_home, "agent:\n  max_turns: 0\n")
    with pytest.raises(
        ConfigError, match=rf"{path}:2: agent.max_turns: .*greater than or equal to 1 \(got 0\)"
    ):
        load_config()


def test_missing_environment_variable(lar_home: Path) -> None:
    path = write(
        lar_home,
        "models:\n  - {name: c, engine: openai, base_url: 'http://h', api_key: '${NOPE}'}\n",
    )
    with pytest.raises(
        ConfigError, match=rf"{path}: models\[0\].api_key: environment variable NOPE is not set"
    ):
        load_config(env={"LAR_HOME": str(lar_home)})


def test_invalid_yaml_gives_line(lar_home: Path) -> None:
    path = write(lar_home, "agent:\n  max_turns: [1\n")
    with pytest.raises(ConfigError, match=rf"{path}:\d+: invalid YAML"):
        load_config()


def test_not_a_mapping(lar_home: Path) -> None:
    write(lar_home, "- just\n- a list\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config()


def test_unknown_model_reference(lar_home: Path) -> None:
    write(lar_home, "model: gpt9\n")
    with pytest.raises(ConfigError, match="model: unknown model 'gpt9'; known: default"):
        load_config()


def test_openai_model_needs_base_url(lar_home: Path) -> None:
    write(lar_home, "models:\n  - name: c\n    engine: openai\n")
    with pytest.raises(ConfigError, match="engine 'openai' needs base_url"):
        load_config()


def test_empty_file_is_defaults(lar_home: Path) -> None:
    write(lar_home, "")
    assert load_config().model == "default"


def test_config_is_keyword_validated() -> None:
    assert LarConfig().tools.allowlist is None


def test_plugin_engine_kinds_are_configurable(lar_home: Path) -> None:
    from lar import Agent
    from lar.engines.base import EngineRegistry
    from lar.engines.scripted import ScriptedEngine

    made: list[dict[str, object]] = []

    def factory(cfg, config, progress):  # type: ignore[no-untyped-def]
        made.append(cfg.options)
        return ScriptedEngine([f"echo from {cfg.name}"], name=cfg.name)

    EngineRegistry.add("echo", factory)
    try:
        write(lar_home, "model: e\nmodels:\n  - {name: e, engine: echo, options: {loud: true}}\n")
        with Agent() as agent:
            assert agent.run("hi").text == "echo from e"
        assert made == [{"loud": True}]
    finally:
        EngineRegistry.remove("echo")
    with pytest.raises(ConfigError, match="unknown engine 'echo'; allowed: llamacpp, openai"):
        load_config()


def test_the_built_in_engine_names_are_the_ones_the_factory_registers() -> None:
    """The config checks engine kinds without importing engines: its list must stay true."""
    from lar.config import BUILTIN_ENGINES
    from lar.engines.base import EngineRegistry
    from lar.engines.factory import engine_for  # noqa: F401 - registers the built-in kinds

    assert set(BUILTIN_ENGINES) == set(EngineRegistry.keys())


def test_policies_in_the_config_are_names_or_edits(lar_home: Path) -> None:
    write(lar_home, "agent:\n  policies: [-more_calls, +described_call]\n")
    assert load_config().agent.policies == ["-more_calls", "+described_call"]
    path = write(lar_home, "agent:\n  policies: off_topic\n")
    with pytest.raises(ConfigError, match=rf"{path}:2: agent.policies"):
        load_config()


def test_a_model_overriding_the_default_is_named_once_in_errors(lar_home: Path) -> None:
    write(
        lar_home, "models:\n  - {name: default, engine: openai, base_url: 'http://127.0.0.1:9'}\n"
    )
    config = load_config()
    assert config.model_names() == ["default"]
    with pytest.raises(ConfigError) as unknown:
        config.model_named("tiny")
    assert str(unknown.value).endswith("unknown model 'tiny'; known: default")


def test_the_readme_config_example_loads_as_written(lar_home: Path, monkeypatch: Any) -> None:
    """The README's config.yaml, copied as it stands, with none of its variables set."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    block = readme.split("`$LAR_HOME/config.yaml`", 1)[1].split("```yaml\n", 1)[1]
    example = block.split("```", 1)[0]
    assert "models:" in example and "credentials:" in example  # the whole example
    for name in re.findall(r"\$\{(\w+)", example):
        monkeypatch.delenv(name, raising=False)
    write(lar_home, example)
    config = load_config()
    assert config.model == "local" and [m.name for m in config.models] == ["local", "tiny"]
    assert {k: v.get_secret_value() for k, v in config.tools.credentials.items()} == {
        "bank_balance": ""
    }
