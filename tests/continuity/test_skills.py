"""Skill activation: the real rule files load as they are; matching is right, sorted and bounded."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity._skill_patterns import _required_literals
from hrm.continuity.skills import (
    ActivationAction,
    Enforcement,
    MatchReason,
    Priority,
    RuleType,
    SkillActivator,
    SkillMatch,
    TriggerConfig,
    _regex_window,
    default_rule_paths,
)
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome

CC = Path(__file__).resolve().parents[1] / "fixtures" / "continuous-claude"
REAL = [CC / "skill-rules.v1.json", CC / "skill-rules.v3.json", CC / "skill-rules.v3-pr133.json"]
SHIPPED = Path(__file__).resolve().parents[2] / "src/hrm/data/home/HOT/config/skill-rules.json"


def write_rules(
    path: Path, skills: dict[str, object], agents: dict[str, object] | None = None
) -> Path:
    path.write_text(json.dumps({"version": "2", "skills": skills, "agents": agents or {}}))
    return path


def rule(**triggers: object) -> dict[str, object]:
    return {
        "type": "domain",
        "enforcement": triggers.pop("enforcement", "suggest"),
        "priority": triggers.pop("priority", "medium"),
        "description": "d",
        "triggers": triggers,
    }


@pytest.mark.parametrize(
    ("path", "skills", "agents"),
    [(REAL[0], 25, 9), (REAL[1], 70, 6), (REAL[2], 73, 17)],
    ids=["v1", "v3", "pr133"],
)
def test_real_rule_files_load_completely(path: Path, skills: int, agents: int) -> None:
    rules = SkillActivator().load_rules([path])
    assert (len(rules.skills), len(rules.agents)) == (skills, agents)
    assert rules.errors == [] and rules.warnings == [] and rules.version == "1.0"


def test_real_values_are_kept_not_defaulted() -> None:
    rules = SkillActivator().load_rules([REAL[2]])
    guard = rules.skills["systematic-debugging"]
    assert (guard.type, guard.enforcement, guard.priority) == (
        RuleType.GUARDRAIL,
        Enforcement.BLOCK,
        Priority.CRITICAL,
    )
    assert guard.extra["blockCondition"].startswith("Block 'fix'")
    assert "math/linear-algebra" in rules.skills or any("/" in name for name in rules.skills)
    v1 = SkillActivator().load_rules([REAL[0]])
    assert {r.enforcement for r in v1.skills.values()} == {Enforcement.SUGGEST, Enforcement.WARN}
    assert "reminder" in v1.skills["test-driven-development"].extra


def test_project_rules_override_global_by_name(tmp_path: Path) -> None:
    project = write_rules(
        tmp_path / "p.json", {"commit": rule(keywords=["ship it"], priority="low")}
    )
    rules = SkillActivator().load_rules([project, REAL[0]])
    assert rules.skills["commit"].triggers.keywords == ("ship it",)
    assert rules.skills["commit"].source_path == project
    assert "describe_pr" in rules.skills  # global rules still there
    assert rules.source_paths == [project, REAL[0]]


def test_bad_regex_and_bad_json_are_load_errors_others_still_load(tmp_path: Path) -> None:
    good = write_rules(
        tmp_path / "a.json",
        {
            "ok": rule(keywords=["deploy"]),
            "broken": rule(intent_patterns=["(unclosed"]),
            "evil": rule(intent_patterns=[r"(a+)\1$"]),
            "nested": rule(intent_patterns=["(a+)+$"]),
        },
    )
    bad = tmp_path / "b.json"
    bad.write_text('{"skills": {"x": ')
    rules = SkillActivator().load_rules([bad, good, tmp_path / "missing.json"])
    assert set(rules.skills) == {"ok", "nested"}  # RE2 runs a nested repetition in linear time
    errors = {(e.file_path.name, e.rule) for e in rules.errors}
    assert errors == {("b.json", None), ("a.json", "broken"), ("a.json", "evil")}
    assert "line 1" in next(e.message for e in rules.errors if e.rule is None)


def test_unknown_values_map_to_defaults_with_warnings(tmp_path: Path) -> None:
    path = write_rules(
        tmp_path / "r.json",
        {"a": {"type": "astrology", "enforcement": "required", "priority": "whenever"}},
    )
    rules = SkillActivator().load_rules([path])
    a = rules.skills["a"]
    assert (a.type, a.enforcement, a.priority) == (
        RuleType.DOMAIN,
        Enforcement.BLOCK,
        Priority.MEDIUM,
    )
    assert len(rules.warnings) == 2


def test_no_rules_file_at_all_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(HRMError) as caught:
        SkillActivator().load_rules([tmp_path / "a.json", tmp_path / "b.json"])
    assert caught.value.code is ErrorCode.NOT_FOUND


def test_keywords_are_whole_words_case_insensitive(tmp_path: Path) -> None:
    path = write_rules(
        tmp_path / "r.json",
        {"pr": rule(keywords=["PR"]), "hooks": rule(keywords=["hook not firing", "PLAN-"])},
    )
    activator = SkillActivator()
    rules = activator.load_rules([path])
    assert [m.skill for m in activator.match_skills("improve the prompt", rules).matches] == []
    assert [m.skill for m in activator.match_skills("open a pr please", rules).matches] == ["pr"]
    found = activator.match_skills("My HOOK NOT FIRING, see PLAN-0001.md", rules).matches
    assert found[0].match_reason.matched_keywords == ["hook not firing", "PLAN-"]


def test_negative_patterns_exclude_and_are_reported(tmp_path: Path) -> None:
    path = write_rules(
        tmp_path / "r.json",
        {"tdd": rule(keywords=["tests"], negative_patterns=[r"skip\s+tests"])},
    )
    activator = SkillActivator()
    rules = activator.load_rules([path])
    result = activator.match_skills("please skip tests today", rules)
    assert result.matches == [] and result.excluded == {"tdd": [r"skip\s+tests"]}
    kept = activator.match_skills("please write tests", rules).matches[0]
    assert kept.match_reason.excluded_by == [r"skip\s+tests"]


def test_sorted_by_priority_then_confidence_without_duplicates(tmp_path: Path) -> None:
    path = write_rules(
        tmp_path / "r.json",
        {
            "low": rule(keywords=["deploy"], priority="low"),
            "high-one": rule(keywords=["deploy"], priority="high"),
            "high-two": rule(
                keywords=["deploy"], intent_patterns=["deploy.*prod"], priority="high"
            ),
            "same": rule(keywords=["deploy"], priority="critical"),
        },
        agents={"same": rule(keywords=["deploy"], priority="low")},
    )
    activator = SkillActivator()
    result = activator.match_skills("deploy to prod", activator.load_rules([path]))
    assert [m.skill for m in result.matches] == ["same", "high-two", "high-one", "low"]
    assert result.matches[1].confidence == 0.8 and result.matches[2].confidence == 0.5
    assert result.total_checked == 5


def test_real_rules_match_real_intents() -> None:
    activator = SkillActivator()
    rules = activator.load_rules([REAL[2]])
    result = activator.match_skills("I need to fix a bug in the login flow, it's failing", rules)
    assert result.matches[0].skill == "systematic-debugging"
    shown = activator.apply_enforcement(result.matches)  # by default a block rule is required
    assert shown.action is ActivationAction.SUGGEST and shown.blocking_skills == []
    assert shown.message.startswith("Required before proceeding: systematic-debugging.")
    action = activator.apply_enforcement(result.matches, enforcement="block")
    assert action.action is ActivationAction.BLOCK
    assert action.blocking_skills == ["systematic-debugging"]
    held = activator.apply_enforcement(result.matches, enforcement="block", may_block=lambda m: False)
    assert held.action is ActivationAction.SUGGEST


def test_a_megabyte_prompt_matches_within_budget() -> None:
    """1 MB on one line with frequent trigger words: the trap that takes 30+ s unbounded."""
    activator = SkillActivator()
    rules = activator.load_rules([REAL[2]])
    words = "the plan and debug hook what which how implement create fix error find search logs"
    prompt = ((words + " ") * 12_000)[:1_000_000]
    result = activator.match_skills(prompt, rules, budget_ms=60_000)
    assert not result.timed_out and result.total_checked == 90
    assert result.matches  # still finds intent in the bounded window


def test_deadline_stops_matching_between_rules() -> None:
    ticks = iter(range(1000))
    activator = SkillActivator(timer=lambda: next(ticks) / 1000)  # 1 ms per call
    rules = activator.load_rules([REAL[1]])
    result = activator.match_skills("commit my changes", rules, budget_ms=5)
    assert result.timed_out and 0 < result.total_checked < 76


def test_empty_prompt_is_rejected() -> None:
    activator = SkillActivator()
    with pytest.raises(HRMError) as caught:
        activator.match_skills("  ", activator.load_rules([REAL[0]]))
    assert caught.value.code is ErrorCode.VALIDATION_FAILED


def _match(skill: str, enforcement: Enforcement, priority: Priority) -> SkillMatch:
    return SkillMatch(
        skill=skill,
        enforcement=enforcement,
        priority=priority,
        match_reason=MatchReason([], [], []),
        confidence=0.5,
    )


@pytest.mark.parametrize(
    ("enforcements", "mode", "action"),
    [
        ([], "block", ActivationAction.CONTINUE),
        ([Enforcement.WARN, Enforcement.WARN], "block", ActivationAction.WARN),
        ([Enforcement.WARN, Enforcement.SUGGEST], "block", ActivationAction.SUGGEST),
        ([Enforcement.SUGGEST, Enforcement.BLOCK, Enforcement.WARN], "block",
         ActivationAction.BLOCK),
        ([Enforcement.SUGGEST, Enforcement.BLOCK, Enforcement.WARN], "suggest",
         ActivationAction.SUGGEST),
        ([Enforcement.WARN, Enforcement.BLOCK], "suggest", ActivationAction.SUGGEST),
    ],
)
def test_apply_enforcement(
    enforcements: list[Enforcement], mode: str, action: ActivationAction
) -> None:
    matches = [_match(f"s{i}", e, Priority.HIGH) for i, e in enumerate(enforcements)]
    result = SkillActivator().apply_enforcement(matches, enforcement=mode)
    assert result.action is action
    assert result.skills == [m.skill for m in matches]
    expected_blocking = [
        m.skill for m in matches if m.enforcement is Enforcement.BLOCK and mode == "block"
    ]
    assert result.blocking_skills == expected_blocking


def test_shipped_default_rules_load_and_default_paths_order(tmp_path: Path) -> None:
    rules = SkillActivator().load_rules([SHIPPED])
    assert {
        "test-driven-development",
        "systematic-debugging",
        "code-review",
        "create-handoff",
    } <= set(rules.skills)
    assert rules.errors == [] and rules.warnings == []
    home = HRMHome(tmp_path / "h")
    paths = default_rule_paths(home, tmp_path)
    assert paths == [
        tmp_path / ".claude/skills/skill-rules.json",
        tmp_path / ".hrm/skill-rules.json",
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "skills/skill-rules.json",
        home.hot_config_dir / "skill-rules.json",
    ]
    assert default_rule_paths(home, None) == paths[-2:]


def _all_real_patterns() -> list[str]:
    patterns: set[str] = set()
    for path in REAL:
        doc = json.loads(path.read_text())
        for section in ("skills", "agents"):
            for spec in doc[section].values():
                patterns.update(spec["promptTriggers"].get("intentPatterns", []))
    return sorted(patterns)


PATTERNS = _all_real_patterns()
VOCAB = sorted({w for p in PATTERNS for w in re.findall(r"[a-z]{3,}", p.lower())})[:400] or ["x"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(VOCAB) | st.sampled_from([" ", "\n", ".", "-", "'"]), max_size=60))
def test_literal_prefilter_never_hides_a_real_match(parts: list[str]) -> None:
    """Property: a pattern the prefilter rules out never matches the text."""
    text = _regex_window(" ".join(parts))
    lowered = text.lower()
    for pattern in PATTERNS:
        required = _required_literals(pattern)
        if required is None or all(any(o in lowered for o in opts) for opts in required):
            continue
        assert re.search(pattern, text, re.IGNORECASE) is None, pattern


# ── the compiled-rules cache ─────────────────────────────────────────────────


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once (normally they must be unchanged for two seconds)."""
    from hrm.continuity import _skill_rules_cache

    monkeypatch.setattr(_skill_rules_cache, "_RACY_SECONDS", 0)


def _rule_state(rules: object) -> list[tuple[object, ...]]:
    """Everything a load yields that matching uses, including the private compiled form."""
    out: list[tuple[object, ...]] = []
    for section in ("skills", "agents"):
        for rule in getattr(rules, section).values():
            compiled = rule._compiled
            out.append(
                (
                    section,
                    rule,
                    rule.extra,
                    rule.source_path,
                    compiled.keywords,
                    [(p.pattern, p.required, p.engine) for p in compiled.intents],
                    [(p.pattern, p.required, p.engine) for p in compiled.negatives],
                )
            )
    return out


@pytest.mark.parametrize("path", REAL, ids=["v1", "v3", "pr133"])
def test_cached_rules_equal_parsed_rules_and_match_alike(path: Path, tmp_path: Path) -> None:
    plain = SkillActivator().load_rules([path])
    cached = SkillActivator(cache_dir=tmp_path / "cache")
    first = cached.load_rules([path])
    second = cached.load_rules([path])
    assert len(list((tmp_path / "cache").iterdir())) == 1
    assert _rule_state(first) == _rule_state(plain) == _rule_state(second)
    assert (second.version, second.errors, second.warnings) == (plain.version, [], [])
    for prompt in ("create a handoff for this session", "debug why the hook is not firing"):
        expected = SkillActivator().match_skills(prompt, plain).matches
        assert SkillActivator().match_skills(prompt, second).matches == expected


@pytest.mark.usefixtures("settled")
def test_a_cache_hit_compiles_only_patterns_whose_literals_occur(tmp_path: Path) -> None:
    path = write_rules(
        tmp_path / "r.json",
        {"a": rule(intentPatterns=["(create|make).*?handoff"]), "b": rule(intentPatterns=["zebra"])},
    )
    activator = SkillActivator(cache_dir=tmp_path / "cache")
    activator.load_rules([path])
    rules = activator.load_rules([path])
    patterns = {r.skill: r._compiled.intents[0] for r in rules.skills.values()}
    assert all(p._regex is None and p._short is None for p in patterns.values())
    found = activator.match_skills("please make a handoff", rules)
    assert [m.skill for m in found.matches] == ["a"]
    # a short prompt runs the one-character repetition on `re` (D411); "zebra" never ran
    assert patterns["a"]._short is not None and patterns["a"]._regex is None
    assert patterns["b"]._regex is None and patterns["b"]._short is None


@pytest.mark.usefixtures("settled")
def test_a_changed_rules_file_is_parsed_again(tmp_path: Path) -> None:
    path = write_rules(tmp_path / "r.json", {"a": rule(keywords=["alpha"])})
    activator = SkillActivator(cache_dir=tmp_path / "cache")
    assert list(activator.load_rules([path]).skills) == ["a"]
    write_rules(path, {"a": rule(keywords=["alpha"]), "bb": rule(keywords=["beta"])})
    assert list(activator.load_rules([path]).skills) == ["a", "bb"]


@pytest.mark.usefixtures("settled")
def test_load_errors_and_warnings_survive_the_cache(tmp_path: Path) -> None:
    path = write_rules(
        tmp_path / "r.json",
        {"bad": rule(intentPatterns=["(unclosed"]), "odd": {**rule(keywords=["x"]), "type": "z"}},
    )
    activator = SkillActivator(cache_dir=tmp_path / "cache")
    first = activator.load_rules([path])
    second = activator.load_rules([path])
    assert [str(e) for e in second.errors] == [str(e) for e in first.errors]
    assert second.errors[0].rule == "bad" and second.warnings == first.warnings != []
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    again = [activator.load_rules([broken]).errors for _ in range(2)]
    assert again[0] == again[1] and "invalid JSON" in again[1][0].message


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("damage", [b"", b"{]", b'{"key": 1}', b"[1, 2]", b'{"key": "x"}'])
def test_a_damaged_or_foreign_cache_is_ignored_and_replaced(damage: bytes, tmp_path: Path) -> None:
    path = write_rules(tmp_path / "r.json", {"a": rule(keywords=["alpha"])})
    activator = SkillActivator(cache_dir=tmp_path / "cache")
    expected = _rule_state(activator.load_rules([path]))
    (cache_file,) = (tmp_path / "cache").iterdir()
    cache_file.write_bytes(damage)
    assert _rule_state(activator.load_rules([path])) == expected
    assert _rule_state(activator.load_rules([path])) == expected
    assert json.loads(cache_file.read_text())["rules"] is not None


def test_a_file_changed_within_the_last_seconds_is_not_cached(tmp_path: Path) -> None:
    """A same-size rewrite within one clock tick would keep the key: such files wait."""
    path = write_rules(tmp_path / "r.json", {"a": rule(keywords=["alpha"])})
    activator = SkillActivator(cache_dir=tmp_path / "cache")
    assert list(activator.load_rules([path]).skills) == ["a"]
    assert not (tmp_path / "cache").exists()
    write_rules(path, {"b": rule(keywords=["alpha"])})  # same size, same tick, maybe
    assert list(activator.load_rules([path]).skills) == ["b"]


@pytest.mark.usefixtures("settled")
def test_an_unwritable_cache_directory_only_costs_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the directory should be")
    path = write_rules(tmp_path / "r.json", {"a": rule(keywords=["alpha"])})
    rules = SkillActivator(cache_dir=blocker).load_rules([path])
    assert list(rules.skills) == ["a"] and rules.errors == []


TRIGGER_WORDS = ["alpha", "beta", "gamma", "delta", "hook", "fix", "make"]


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.text("abcxyz-_/", min_size=1, max_size=8),
        st.fixed_dictionaries(
            {
                "keywords": st.lists(st.sampled_from(TRIGGER_WORDS), max_size=3),
                "intentPatterns": st.lists(
                    st.builds(
                        lambda a, b: f"({a}|{b}).*?{b}",
                        st.sampled_from(TRIGGER_WORDS),
                        st.sampled_from(TRIGGER_WORDS),
                    ),
                    max_size=2,
                ),
            }
        ),
        max_size=6,
    ),
    st.lists(st.sampled_from(TRIGGER_WORDS), min_size=1, max_size=8),
)
def test_cache_round_trip_property(
    skills: dict[str, dict[str, list[str]]], words: list[str]
) -> None:
    """Any rule file loads from its cache as it parses, and every prompt matches alike."""
    import tempfile
    from unittest import mock

    from hrm.continuity import _skill_rules_cache as module

    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(module, "_RACY_SECONDS", 0):
        path = write_rules(Path(tmp) / "r.json", {k: rule(**v) for k, v in skills.items()})
        plain = SkillActivator().load_rules([path])
        activator = SkillActivator(cache_dir=Path(tmp) / "cache")
        activator.load_rules([path])
        cached = activator.load_rules([path])
        assert _rule_state(cached) == _rule_state(plain)
        prompt = " ".join(words)
        assert (
            activator.match_skills(prompt, cached).matches
            == activator.match_skills(prompt, plain).matches
        )


# ── the records keep value semantics ─────────────────────────────────────────


def test_records_are_frozen_values() -> None:
    import copy
    import pickle

    reason = MatchReason(["k"], [], [])
    match = _match("s", Enforcement.SUGGEST, Priority.HIGH)
    assert match == _match("s", Enforcement.SUGGEST, Priority.HIGH)
    assert match != _match("t", Enforcement.SUGGEST, Priority.HIGH)
    assert reason == MatchReason(["k"], [], []) and reason != MatchReason([], [], [])
    with pytest.raises(TypeError):
        hash(reason)  # lists inside, as with a frozen dataclass
    triggers = TriggerConfig(keywords=("a",))
    assert hash(triggers) == hash(TriggerConfig(("a",), (), ()))
    assert repr(match).startswith("SkillMatch(skill='s', enforcement=")
    with pytest.raises(AttributeError):
        match.skill = "other"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(match)) == match
    assert copy.deepcopy(match) == match and copy.copy(match) == match


def test_cache_file_names_are_stable_across_processes() -> None:
    """Unlike `hash(str)`, the digest naming a cache file is the same in every process."""
    import subprocess
    import sys

    from hrm.continuity.skills import _path_digest

    code = "from pathlib import Path; from hrm.continuity.skills import _path_digest as d; "
    code += "print(d(Path('/p/é')), d(Path('/p/q')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    assert out.stdout.split() == [_path_digest(Path("/p/é")), _path_digest(Path("/p/q"))]
    assert _path_digest(Path("/p/é")) != _path_digest(Path("/p/q"))
    assert _path_digest(Path("a")) == "af63dc4c8601ec8c"  # the FNV-1a 64 test vector of "a"
