"""Configuration precedence, source attribution and validation (001 §10, §12.1; 003 §1)."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hrm._config_build import _adapter, already_valid, build_section
from hrm.cli.app import app
from hrm.config import (
    ConfigSource,
    ContinuityConfig,
    HRMConfig,
    LLMConfig,
    PolicySurface,
    get_config,
    load_config,
)
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.types import AltitudeLevel, Stance


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_match_the_spec(home: HRMHome, tmp_path: Path) -> None:
    cfg = load_config(home, tmp_path, environ={}).config
    assert cfg.altitude_default_level is AltitudeLevel.L2_OPERATIONS
    assert cfg.default_stance is Stance.SENSEMAKING
    assert cfg.escalation_threshold == 0.6
    assert cfg.pattern_creation_threshold == 3
    assert cfg.policy == PolicySurface()


def test_precedence_default_global_project_env(home: HRMHome, tmp_path: Path) -> None:
    write(
        home.config_path,
        "escalation_threshold: 0.5\nmax_commitment_turns: 4\npattern_match_threshold: 0.8\n",
    )
    project = tmp_path / "proj"
    write(
        project / ".hrm" / "config.yaml", "max_commitment_turns: 6\npattern_match_threshold: 0.9\n"
    )
    r = load_config(home, project, environ={"HRM_PATTERN_MATCH_THRESHOLD": "0.95"})
    assert r.get("trace_enabled").source is ConfigSource.DEFAULT
    assert r.get("escalation_threshold").source is ConfigSource.GLOBAL
    assert r.get("max_commitment_turns").value == 6
    assert r.get("max_commitment_turns").source is ConfigSource.PROJECT
    v = r.get("pattern_match_threshold")
    assert (v.value, v.source, v.precedence, v.origin) == (
        0.95,
        ConfigSource.ENV,
        3,
        "environment (HRM_PATTERN_MATCH_THRESHOLD)",
    )


def test_sections_and_env_nesting(home: HRMHome, tmp_path: Path) -> None:
    write(
        home.config_path,
        "llm:\n  provider: offline\n  max_tokens: 200\npolicy:\n  ASK_BAND_LOW: 0.5\n",
    )
    r = load_config(
        home,
        tmp_path,
        environ={
            "HRM_LLM__MODEL": "m1",
            "HRM_POLICY__ESCALATION_THRESHOLD": "0.65",
            "HRM_PROVIDER": "openai",
        },
    )
    assert r.config.llm.provider == "openai"
    assert r.config.llm.model == "m1"
    assert r.config.llm.max_tokens == 200
    assert r.config.policy.ASK_BAND_LOW == 0.5
    assert r.config.policy.ESCALATION_THRESHOLD == 0.65


@pytest.mark.parametrize(
    ("text", "code", "needle"),
    [
        pytest.param(
            "escalation_threshold: high\n",
            ErrorCode.VALIDATION_FAILED,
            "escalation_threshold",
            id="wrong-type",
        ),
        pytest.param(
            "escalation_treshold: 0.5\n",
            ErrorCode.VALIDATION_FAILED,
            "escalation_threshold",
            id="unknown-key-suggests",
        ),
        pytest.param(
            "llm:\n  provder: x\n",
            ErrorCode.VALIDATION_FAILED,
            "llm.provder",
            id="unknown-nested-key",
        ),
        pytest.param(
            "llm:\n  restate_preferences: sometimes\n",
            ErrorCode.VALIDATION_FAILED,
            "llm.restate_preferences",
            id="restate-preferences-choice",
        ),
        pytest.param(
            "policy:\n  WEIGHT_URGENCY: 0.5\n", ErrorCode.VALIDATION_FAILED, "sum to", id="weights"
        ),
        pytest.param(
            "policy:\n  ASK_BAND_HIGH: 0.5\n",
            ErrorCode.VALIDATION_FAILED,
            "ASK_BAND",
            id="bands-order",
        ),
        pytest.param(
            "max_commitment_turns: 0\n",
            ErrorCode.VALIDATION_FAILED,
            "max_commitment_turns",
            id="range",
        ),
        pytest.param(
            "default_stance: dreaming\n", ErrorCode.VALIDATION_FAILED, "default_stance", id="enum"
        ),
        pytest.param(
            "llm: [1, 2\n", ErrorCode.PARSE_ERROR, "config.yaml:2: invalid YAML", id="yaml-syntax"
        ),
        pytest.param("- a\n- b\n", ErrorCode.VALIDATION_FAILED, "mapping", id="not-a-mapping"),
        pytest.param("llm: openai\n", ErrorCode.VALIDATION_FAILED, "llm", id="section-not-mapping"),
    ],
)
def test_bad_config_names_key_and_file(
    home: HRMHome, tmp_path: Path, text: str, code: ErrorCode, needle: str
) -> None:
    path = write(home.config_path, text)
    with pytest.raises(HRMError) as info:
        load_config(home, tmp_path, environ={})
    assert info.value.code is code
    assert needle in info.value.message
    assert str(path) in info.value.message


def test_bad_env_value_names_the_variable(home: HRMHome, tmp_path: Path) -> None:
    with pytest.raises(HRMError) as info:
        load_config(home, tmp_path, environ={"HRM_MAX_COMMITMENT_TURNS": "many"})
    assert "HRM_MAX_COMMITMENT_TURNS" in info.value.message


def test_get_config_scopes(home: HRMHome, tmp_path: Path) -> None:
    write(home.config_path, "trace_enabled: true\n")
    r = load_config(home, tmp_path, environ={})
    assert get_config("MERGED", "trace_enabled", resolved=r).value is True
    assert get_config("GLOBAL", "trace_enabled", resolved=r).source is ConfigSource.GLOBAL
    with pytest.raises(HRMError) as info:
        get_config("PROJECT", "trace_enabled", resolved=r)
    assert info.value.code is ErrorCode.KEY_NOT_FOUND
    assert info.value.context["default_value"] is False
    with pytest.raises(HRMError) as info:
        get_config("SIDEWAYS", "trace_enabled", resolved=r)
    assert info.value.code is ErrorCode.INVALID_SCOPE
    with pytest.raises(HRMError) as info:
        get_config("MERGED", "trace_enable", resolved=r)
    assert "trace_enabled" in info.value.message


def test_policy_validate_rejects_bad_weights() -> None:
    with pytest.raises(HRMError):
        PolicySurface(WEIGHT_PRIORITY=0.9).validate()
    assert PolicySurface().validate()


def test_llm_config_from_yaml_and_env(tmp_path: Path) -> None:
    path = write(
        tmp_path / "llm.yaml", "provider: anthropic\nmodel: claude-x\nretry_on: [rate_limit]\n"
    )
    cfg = LLMConfig.from_yaml(path)
    assert (cfg.provider, cfg.model, cfg.retry_on) == ("anthropic", "claude-x", ["rate_limit"])
    env = LLMConfig.from_env(
        {"LLM_PROVIDER": "openai", "LLM_TEMPERATURE": "0.2", "OPENAI_API_KEY": "k1"}
    )
    assert env.provider == "openai" and env.temperature == 0.2
    assert env.resolve_api_key({"OPENAI_API_KEY": "k1"}) == "k1"
    assert "k1" not in repr(LLMConfig(api_key="k1"))


def test_config_show_cli(home: HRMHome) -> None:
    import json

    write(home.config_path, "trace_enabled: true\n")
    runner = CliRunner()
    result = runner.invoke(
        app, ["config", "show", "trace_enabled", "--home", str(home.root), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "key": "trace_enabled",
        "value": True,
        "source": "GLOBAL",
        "precedence": 1,
        "origin": str(home.config_path),
    }
    result = runner.invoke(app, ["config", "show", "--home", str(home.root)])
    assert result.exit_code == 0 and "escalation_threshold" in result.stdout
    # `hrm config` alone shows the same (it said "Missing command.").
    bare = runner.invoke(app, ["config", "--home", str(home.root), "--json"])
    assert bare.exit_code == 0, bare.output
    assert {"key": "trace_enabled", "value": True, "source": "GLOBAL", "precedence": 1,
            "origin": str(home.config_path)} in json.loads(bare.stdout)["values"]
    write(home.config_path, "trace_enabled: maybe\n")
    result = runner.invoke(app, ["config", "show", "--home", str(home.root)])
    assert result.exit_code != 0
    assert "trace_enabled" in result.stderr


def test_hrmconfig_direct_construction() -> None:
    assert HRMConfig().llm.provider == "auto"


@pytest.mark.parametrize("word", ["on", "off", "yes", "no", "true", "false"])
def test_on_off_keys_take_the_words_yaml_reads_as_booleans(tmp_path: Path, word: str) -> None:
    # YAML 1.1 reads a bare `off` as false: `embeddings: off` was refused as "not a string".
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"continuity:\n  embeddings: {word}\nllm:\n  restate_preferences: {word}\n"
    )
    config = load_config(HRMHome.resolve(home)).config
    expected = "on" if word in ("on", "yes", "true") else "off"
    assert config.continuity.embeddings == expected
    assert config.llm.restate_preferences == expected


def test_topic_embeddings_on_without_the_extra_is_refused_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from hrm.continuity import embeddings
    from hrm.errors import ErrorCode, HRMError
    from hrm.pipeline import HRM

    monkeypatch.setattr(embeddings, "available", lambda: False)
    config = replace(load_config(tmp_path / "home").config, topic_embeddings="on")
    with pytest.raises(HRMError) as info:
        HRM.open(tmp_path / "home", "ADMIN", "offline", config=config)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "topic_embeddings" in info.value.message and "embeddings" in info.value.message
    for switch in ("auto", "off"):  # words alone decide, and the stack opens
        HRM.open(tmp_path / "home", "ADMIN", "offline",
                 config=replace(config, topic_embeddings=switch)).close()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("max_commitment_turns: true\n", "'max_commitment_turns' in {f} must be an integer, got True", id="bool-for-int"),
        pytest.param("max_commitment_turns: '3'\n", "'max_commitment_turns' in {f} must be an integer, got '3'", id="quoted-int"),
        pytest.param("max_commitment_turns: 3.0\n", "'max_commitment_turns' in {f} must be an integer, got 3.0", id="float-for-int"),
        pytest.param("llm:\n  temperature: yes\n", "'llm.temperature' in {f} must be a number, got True", id="bool-for-float"),
        pytest.param("llm:\n  model: true\n", "'llm.model' in {f} must be a string, got True", id="bool-for-str"),
        pytest.param("policy:\n  PRIORITY_SCALE: [1]\n", "'policy.PRIORITY_SCALE' in {f} must be a list of 2 items, got [1]", id="tuple-length"),
        pytest.param("policy:\n  PRIORITY_SCALE: [1, x]\n", "'policy.PRIORITY_SCALE[1]' in {f} must be an integer, got 'x'", id="tuple-item"),
        pytest.param("llm:\n  retry_on: [timeout, [b]]\n", "'llm.retry_on[1]' in {f} must be a string, got ['b']", id="list-item"),
        pytest.param("llm:\n  pricing: {input_per_1k: cheap}\n", "'llm.pricing.input_per_1k' in {f} must be a number, got 'cheap'", id="dict-value"),
        pytest.param("continuity:\n  skill_rules: a.json\n", "'continuity.skill_rules' in {f} must be a list, got 'a.json'", id="str-for-list"),
        pytest.param("default_stance: 3\n", "'default_stance' in {f} must be one of 'sensemaking', 'discovery', 'execution' or 'evaluation', got 3", id="enum"),
        pytest.param("trace_enabled: maybe\n", "'trace_enabled' in {f} must be true or false, got 'maybe'", id="bool"),
    ],
)
def test_a_value_of_the_wrong_kind_names_key_file_expectation_and_value(
    home: HRMHome, tmp_path: Path, text: str, message: str
) -> None:
    path = write(home.config_path, text)
    with pytest.raises(HRMError) as info:
        load_config(home, tmp_path, environ={})
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert info.value.message == "Config key " + message.format(f=path)
    assert info.value.context["file"] == str(path)


def test_values_are_read_as_people_write_them(home: HRMHome, tmp_path: Path) -> None:
    write(
        home.config_path,
        "default_stance: EXECUTION\naltitude_default_level: l2_operations\n"
        "escalation_threshold: 0.5\nllm:\n  model: 4\n  temperature: 1\n  pricing: {1: 2}\n"
        "  api_key_env: null\npolicy:\n  PRIORITY_SCALE: [2, 9]\n"
        "  PREFERENCE_PATTERNS: [I prefer, 42]\ncontinuity:\n  embeddings: off\n",
    )
    config = load_config(home, tmp_path, environ={"HRM_LLM__MAX_TOKENS": "300"}).config
    assert config.default_stance is Stance.EXECUTION  # by name, any case
    assert config.altitude_default_level is AltitudeLevel.L2_OPERATIONS
    assert (config.llm.model, config.llm.temperature, config.llm.pricing) == ("4", 1.0, {"1": 2.0})
    assert isinstance(config.llm.temperature, float) and config.llm.max_tokens == 300
    assert config.llm.api_key_env is None
    assert config.policy.PRIORITY_SCALE == (2, 9)
    assert config.policy.PREFERENCE_PATTERNS == ("I prefer", "42")
    assert config.continuity.embeddings == "off"


def test_an_unknown_key_of_an_llm_file_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "llm.yaml", "provider: openai\ntemprature: 0.2\n")
    with pytest.raises(HRMError) as info:
        LLMConfig.from_yaml(path)
    assert info.value.message == f"Unknown config key 'temprature' in {path}"


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
    st.sampled_from(["auto", "on", "off", "execution", "L2_OPERATIONS", "group"]),
)  # fmt: skip
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=6,
)
_FIELDS = [
    (cls, f.name)
    for cls in (HRMConfig, LLMConfig, PolicySurface, ContinuityConfig)
    for f in dataclasses.fields(cls)
    if f.name not in ("llm", "policy", "continuity")
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_FIELDS), _VALUES)
def test_any_value_is_either_read_as_its_type_or_refused_naming_the_key(
    field: tuple[type, str], value: object
) -> None:
    """Whatever YAML hands over, a field gets a value of its type or a one-line refusal."""
    cls, name = field
    try:
        built = build_section(cls, {name: value}, "config.yaml", "sec")
    except HRMError as exc:
        assert exc.code is ErrorCode.VALIDATION_FAILED
        assert f"'sec.{name}" in exc.message and "config.yaml" in exc.message
        return
    hint = typing.get_type_hints(cls)[name]
    result = getattr(built, name)
    if already_valid(hint, value):  # the hook's shortcut agrees with pydantic
        assert result is value
        checked = _adapter(hint).validate_python(value)
        assert (checked, type(checked)) == (value, type(value))
