"""Every key of 001 §10 works or is gone with a decision; a project's file is data until trusted.

001 §10's keys each reach the part of a stack that acts on them (a table, one row a key);
``memory_file_locking`` and ``auto_trim_enabled`` were removed (D225, D226) and a file still
holding one loads with a one-line warning. ``default_stance`` is where a new stack starts
(D224). A project's ``.hrm/config.yaml`` sets only harmless keys until the person trusts it
(D216), and says once which it ignored (D217).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hrm import HRM
from hrm._config_trust import PROJECT_SAFE_KEYS, needs_trust
from hrm.config import HRMConfig, _known_keys, load_config
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.tracing import get_tracer, set_tracer
from hrm.trust import TrustStore
from hrm.types import AltitudeLevel, Stance


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- 001 §10: each key has an effect -----------------------------------------------------------


@dataclass(frozen=True)
class KeyCase:
    key: str
    yaml: str
    """The value as a config file writes it."""
    observe: Callable[[HRM], Any]
    """What the opened stack shows of the key."""
    expected: Any


SPEC_KEYS = [
    KeyCase("altitude_default_level", "strategy", lambda h: h.current_altitude,
            AltitudeLevel.L3_STRATEGY),
    KeyCase("altitude_allow_l4_actions", "true",
            lambda h: h.stack.altitude.validate_action(
                {"type": "amend_policy"}, AltitudeLevel.L4_IDENTITY), True),
    KeyCase("escalation_threshold", "0.35",
            lambda h: h.stack.router.escalation_manager.threshold, 0.35),
    KeyCase("pattern_match_threshold", "0.9",
            lambda h: h.stack.router.strategy_selector.pattern_match_threshold, 0.9),
    KeyCase("max_agents_per_bundle", "2",
            lambda h: (h.stack.router.max_agents_per_bundle, h.focus.approval.max_agents),
            (2, 2)),
    KeyCase("default_stance", "discovery", lambda h: h.stance, Stance.DISCOVERY),
    KeyCase("max_commitment_turns", "4", lambda h: h.focus.commitments.max_turns, 4),
    KeyCase("agent_execution_timeout_ms", "1234",
            lambda h: h.stack.router.agent_timeout_ms, 1234),
    KeyCase("pattern_creation_threshold", "5",
            lambda h: h.stack.feedback.pattern_creation_threshold, 5),
    KeyCase("working_set_default_ttl_hours", "7",
            lambda h: h.stack.bus.working.default_ttl_hours, 7),
]


def test_every_spec_key_is_in_the_table_or_removed() -> None:
    spec = {
        "altitude_default_level", "altitude_allow_l4_actions", "escalation_threshold",
        "pattern_match_threshold", "max_agents_per_bundle", "default_stance",
        "max_commitment_turns", "agent_execution_timeout_ms", "pattern_creation_threshold",
        "auto_trim_enabled", "working_set_default_ttl_hours", "memory_file_locking",
        "trace_enabled", "trace_file",
    }
    tested = {case.key for case in SPEC_KEYS} | {"trace_enabled", "trace_file"}
    removed = {"auto_trim_enabled", "memory_file_locking"}
    assert spec == tested | removed
    assert removed.isdisjoint(_known_keys())


@pytest.mark.parametrize("case", SPEC_KEYS, ids=lambda c: c.key)
def test_a_spec_key_set_in_the_homes_file_reaches_the_stack(
    home: HRMHome, tmp_path: Path, case: KeyCase
) -> None:
    write(home.config_path, f"{case.key}: {case.yaml}\n")
    with HRM.open(home, llm="offline", project_dir=tmp_path) as opened:
        assert case.observe(opened) == case.expected
    with HRM.open(HRMHome(tmp_path / "plain"), llm="offline", project_dir=tmp_path) as plain:
        assert case.observe(plain) != case.expected  # the default differs: the key did it


def test_trace_enabled_writes_the_trace_file_it_names(home: HRMHome, tmp_path: Path) -> None:
    write(home.config_path, "trace_enabled: true\ntrace_file: mine.jsonl\n")
    before = get_tracer()
    try:
        with HRM.open(home, llm="offline", project_dir=tmp_path) as opened:
            opened.turn("How do I rename a git branch?")
    finally:
        set_tracer(before)  # opening installs the process's tracer; later tests expect none
    trace = home.logs_dir / "mine.jsonl"
    assert trace.is_file() and '"pipeline"' in trace.read_text()


# -- default_stance -----------------------------------------------------------------------------


def test_a_new_stack_and_each_new_session_start_in_the_default_stance(
    home: HRMHome, tmp_path: Path
) -> None:
    write(home.config_path, "default_stance: execution\n")
    config = load_config(home, tmp_path, environ={}).config
    assert config.policy.NEW_SESSION_STANCE == "execution"
    with HRM.open(home, llm="offline", config=config) as opened:
        assert opened.stance is Stance.EXECUTION
        resets = [r.data for r in opened.decisions.tail(50) if r.kind == "stance_reset"]
        assert resets[-1]["to"] == "execution"  # recorded as the session's start
    with HRM.open(home, llm="offline", config=config, new_session=True) as again:
        assert again.stance is Stance.EXECUTION


def test_the_two_names_of_the_start_stance_are_one_setting(home: HRMHome, tmp_path: Path) -> None:
    write(home.config_path, "policy:\n  NEW_SESSION_STANCE: evaluation\n")
    write(tmp_path / ".hrm" / "config.yaml", "default_stance: discovery\n")
    config = load_config(home, tmp_path, environ={}).config  # the project's layer wins
    assert (config.default_stance, config.policy.NEW_SESSION_STANCE) == (
        Stance.DISCOVERY, "discovery"
    )
    assert HRMConfig(default_stance=Stance.EVALUATION).policy.NEW_SESSION_STANCE == "evaluation"
    write(home.config_path, "default_stance: discovery\npolicy:\n  NEW_SESSION_STANCE: execution\n")
    with pytest.raises(HRMError) as disagree:
        load_config(home, tmp_path / "elsewhere", environ={})
    assert disagree.value.code is ErrorCode.VALIDATION_FAILED
    assert str(home.config_path) in disagree.value.message


# -- removed keys -------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["memory_file_locking", "auto_trim_enabled"])
def test_a_removed_key_warns_once_and_does_not_fail(
    home: HRMHome, tmp_path: Path, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path / "cfg" / "config.yaml", f"{key}: true\nescalation_threshold: 0.5\n")
    home_of = HRMHome(path.parent)
    with caplog.at_level(logging.WARNING, logger="hrm.config"):
        first = load_config(home_of, tmp_path, environ={})
        load_config(home_of, tmp_path, environ={})
    assert first.config.escalation_threshold == 0.5
    assert key not in first.values
    lines = [r.getMessage() for r in caplog.records if key in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith(f"config key '{key}' in {path} has no effect")


def test_a_removed_key_in_the_environment_warns(
    home: HRMHome, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="hrm.config"):
        load_config(home, tmp_path, environ={"HRM_MEMORY_FILE_LOCKING": "false"})
    assert any("HRM_MEMORY_FILE_LOCKING" in r.getMessage() for r in caplog.records)


# -- a project's file is data until trusted ----------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "needs"),
    [
        ("llm.provider", "openai", True),
        ("llm.base_url", "http://203.0.113.9/v1", True),
        ("llm.api_key", "sk-x", True),
        ("llm.api_key_env", "AWS_SECRET_ACCESS_KEY", True),
        ("llm.model", "gpt-4o", True),
        ("llm.model_path", "/tmp/evil.gguf", True),
        ("llm.max_tokens", 100_000, True),
        ("trace_file", "/srv/www/trace.jsonl", True),
        ("stack_token_budget", 10**9, True),
        ("altitude_allow_l4_actions", True, True),
        ("continuity.skill_rules", ["/tmp/rules.json"], True),
        ("policy.PREFERENCE_PATTERNS", ["(a+)+$"], True),
        ("continuity.enforcement", "block", True),
        ("continuity.enforcement", "suggest", False),
        ("continuity.capture", "on", True),
        ("continuity.capture", True, True),
        ("continuity.capture", "off", False),
        ("continuity.capture", False, False),
        ("llm.temperature", 0.2, False),
        ("escalation_threshold", 0.5, False),
        ("default_stance", "execution", False),
        ("policy.ASK_BAND_LOW", 0.5, False),
        ("continuity.session_start_max_learnings", 3, False),
        ("a_key_added_later", 1, True),
    ],
)
def test_which_project_keys_need_trust(key: str, value: Any, needs: bool) -> None:
    assert needs_trust(key, value) is needs


def test_the_harmless_keys_are_all_real_keys() -> None:
    assert _known_keys() >= PROJECT_SAFE_KEYS


PROJECT_FILE = (
    "escalation_threshold: 0.45\n"
    "llm:\n  provider: openai\n  base_url: http://203.0.113.9/v1\n  temperature: 0.1\n"
    "policy:\n  ASK_BAND_LOW: 0.5\n  PREFERENCE_PATTERNS: ['I prefer']\n"
)


def test_an_untrusted_project_sets_only_harmless_keys_and_says_which_once(
    home: HRMHome, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path / ".hrm" / "config.yaml", PROJECT_FILE)
    with caplog.at_level(logging.WARNING, logger="hrm.config"):
        first = load_config(home, tmp_path, environ={})
        second = load_config(home, tmp_path, environ={})
    config = first.config
    assert (config.escalation_threshold, config.llm.temperature, config.policy.ASK_BAND_LOW) == (
        0.45, 0.1, 0.5
    )
    assert (config.llm.provider, config.llm.base_url) == ("auto", None)
    assert len(config.policy.PREFERENCE_PATTERNS) > 1  # the built-in ones
    assert first.ignored[0].keys == (
        "llm.base_url", "llm.provider", "policy.PREFERENCE_PATTERNS"
    )
    assert first.values["llm.provider"].source.value == "DEFAULT"
    assert second.ignored == first.ignored
    notices = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert notices == [first.ignored[0].message()]
    assert notices[0].startswith(f"ignored llm.base_url, llm.provider, "
                                 f"policy.PREFERENCE_PATTERNS from {path}: the project is not "
                                 "trusted")


def test_a_trusted_project_sets_everything_until_its_file_changes(
    home: HRMHome, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path / ".hrm" / "config.yaml", PROJECT_FILE)
    TrustStore(home).trust(tmp_path)
    trusted = load_config(home, tmp_path, environ={})
    assert trusted.ignored == []
    assert trusted.config.llm.base_url == "http://203.0.113.9/v1"
    stamp = trusted.config.llm.base_url_project
    assert stamp is not None and stamp.path == str(path) and stamp.still_trusted()
    path.write_text(PROJECT_FILE.replace("203.0.113.9", "198.51.100.7"))
    with caplog.at_level(logging.WARNING, logger="hrm.config"):
        changed = load_config(home, tmp_path, environ={})
    assert changed.config.llm.base_url is None
    assert changed.ignored[0].changed is True
    assert "it changed since you trusted the project" in caplog.records[-1].getMessage()


def test_the_base_url_stamp_is_no_config_key(home: HRMHome, tmp_path: Path) -> None:
    write(home.config_path, "llm:\n  base_url_project: forged\n")
    with pytest.raises(HRMError) as unknown:
        load_config(home, tmp_path, environ={})
    assert "Unknown config key 'llm.base_url_project'" in unknown.value.message
