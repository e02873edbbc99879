"""Configuration precedence, source attribution and validation (001 §10, §12.1; 003 §1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.config import (
    ConfigSource,
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
    assert cfg.auto_trim_enabled is False
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
