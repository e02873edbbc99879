"""User skill patterns cannot stall a prompt; the person's own rules are read (issue 31 #6)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity._skill_patterns import (
    ENGINE_RE,
    ENGINE_RE2,
    ENGINE_SHORT_RE,
    SHORT_TEXT,
    checked_pattern,
)
from hrm.continuity.hook_entry import answer_hook
from hrm.continuity.hooks import HookOrchestrator, HookSettings, UserPrompt
from hrm.continuity.skills import SkillActivator, user_rule_path
from hrm.home import HRMHome


def rules_file(path: Path, **skills: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": "1.0", "skills": skills}), encoding="utf-8")
    return path


def rule(*, patterns: list[str] | None = None, keywords: list[str] | None = None,
         description: str = "", enforcement: str = "suggest") -> dict[str, Any]:
    return {"type": "domain", "enforcement": enforcement, "priority": "high",
            "description": description,
            "promptTriggers": {"keywords": keywords or [], "intentPatterns": patterns or []}}


def within(seconds: float, work: Any) -> Any:
    """Run `work` on a thread; fail (instead of hanging the suite) if it does not finish."""
    box: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: box.setdefault("value", work()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "matching stalled"
    return box["value"]


@pytest.mark.parametrize(
    ("pattern", "engine"),
    [
        pytest.param("(create|make) (a )?handoff", ENGINE_RE, id="no-repetition"),
        pytest.param(r"resume\b", ENGINE_RE, id="literal"),
        pytest.param("(a|aa)*c", ENGINE_RE2, id="the-11-second-pattern"),
        pytest.param("(a+)+$", ENGINE_RE2, id="nested"),
        pytest.param("(what|which).*?pattern.*?(skill|rule)", ENGINE_RE2, id="real-two-lazy"),
        pytest.param("(?:ab)+c", ENGINE_RE2, id="repeats-two-characters"),
        pytest.param("(create|make).*?handoff", ENGINE_SHORT_RE, id="real-one-lazy"),
        pytest.param(r"\bfix(\w)+", ENGINE_SHORT_RE, id="one-class-in-a-group"),
        pytest.param("x{2,}", ENGINE_SHORT_RE, id="counted"),
    ],
)
def test_a_pattern_that_repeats_runs_on_the_linear_engine(pattern: str, engine: str) -> None:
    assert checked_pattern(pattern).engine == engine


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        pytest.param(r"(a+)\1", "backreferences", id="backreference"),
        pytest.param(r"(?=foo).*bar", "lookarounds", id="lookahead"),
        pytest.param("(unclosed", "invalid regex", id="invalid"),
    ],
)
def test_a_pattern_no_engine_can_bound_is_refused_with_a_reason(
    pattern: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        checked_pattern(pattern)


def test_the_issues_pathological_pattern_answers_a_long_prompt_at_once(tmp_path: Path) -> None:
    path = rules_file(tmp_path / "rules.json", stall=rule(patterns=["(a|aa)*c"]))
    activator = SkillActivator()
    rules = activator.load_rules([path])
    assert rules.errors == []
    for prompt, expected in (("a" * 39, []), ("a" * 5_000 + "c", ["stall"]),
                             ("c " + "a" * 100_000, ["stall"]), ("a" * 100_000, [])):
        found = within(60, lambda p=prompt: activator.match_skills(p, rules, budget_ms=60_000))
        assert [m.skill for m in found.matches] == expected
        assert not found.timed_out


_ATOMS = st.sampled_from(["a", "b", "ab", "[ab]", ".", "(a|b)", "(a|aa)", "\\s", "x"])
_QUANTIFIERS = st.sampled_from(["", "", "?", "*", "+", "*?", "{1,3}", "{2}"])


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(_ATOMS, _QUANTIFIERS), min_size=1, max_size=4))
    return "".join(atom + quantifier for atom, quantifier in parts)


@settings(max_examples=200, deadline=None)
@given(pattern=patterns(), text=st.text(alphabet="abx ", max_size=40))
def test_both_engines_find_what_pythons_finds(pattern: str, text: str) -> None:
    """Whichever engine a pattern is given, it matches where Python's `re` matches."""
    checked = checked_pattern(pattern)
    expected = re.search(pattern, text, re.IGNORECASE) is not None
    assert (checked.search(text) is not None) == expected  # a short text
    assert (checked.regex.search(text) is not None) == expected  # the engine of long ones
    repeats = any(q in pattern for q in ("*", "+", "{1,3}", "{2}"))
    assert (checked.engine == ENGINE_RE) is not repeats


def test_one_repeated_character_runs_on_re_in_a_short_text_and_on_re2_past_it() -> None:
    checked = checked_pattern("(create|make).*?handoff")
    assert checked.engine == ENGINE_SHORT_RE
    short = "please make a handoff"
    assert checked.search(short) is not None
    assert type(checked._short).__module__ == "re"
    long = "x" * SHORT_TEXT + " make a handoff"
    assert checked.search(long) is not None
    assert type(checked.regex).__module__.startswith("re2")
    assert checked.search("x" * SHORT_TEXT + " make a plan") is None


def test_a_hook_on_a_short_prompt_does_not_load_re2(tmp_path: Path, home: HRMHome) -> None:
    """RE2's import is most of a hook's matching time (D411); a typed prompt does without."""
    project = tmp_path / "app"
    rules_file(project / ".claude" / "skills" / "skill-rules.json",
               handoff=rule(patterns=["(create|make).*?handoff"], description="handoffs"))
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(project),
               "prompt": "please make a handoff for the parser work"}
    script = (
        "import json, sys\n"
        "from hrm.continuity import _skill_rules_cache\n"
        "from hrm.continuity.hook_entry import answer_hook\n"
        "_skill_rules_cache._RACY_SECONDS = 0  # cache the files this test just wrote\n"
        "run = answer_hook(sys.stdin.buffer.read(), [], environ={'HRM_HOME': sys.argv[1]},"
        " cwd=sys.argv[2])\n"
        "print(json.dumps({'re2': 're2' in sys.modules, 'output': run.output}))\n"
    )
    seen = []
    for _ in range(2):  # the first checks the files (on RE2 too) and caches their rules
        done = subprocess.run(
            [sys.executable, "-c", script, str(home.root), str(project)],
            input=json.dumps(payload).encode(), capture_output=True, check=True, timeout=120,
        )
        seen.append(json.loads(done.stdout))
    for run in seen:
        context = json.loads(run["output"])["hookSpecificOutput"]["additionalContext"]
        assert "handoffs" in context
    assert seen[1]["re2"] is False


def test_the_rules_cache_keeps_each_patterns_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hrm.continuity import _skill_rules_cache

    monkeypatch.setattr(_skill_rules_cache, "_RACY_SECONDS", 0)  # cache a file just written
    path = rules_file(tmp_path / "rules.json",
                      lazy=rule(patterns=["deploy.*?prod"]), plain=rule(patterns=["(ship|push) it"]))
    activator = SkillActivator(cache_dir=tmp_path / "cache")
    first = activator.load_rules([path])
    second = activator.load_rules([path])
    assert any((tmp_path / "cache").iterdir())
    engines = {name: rule._compiled.intents[0].engine for name, rule in second.skills.items()}
    assert engines == {"lazy": ENGINE_SHORT_RE, "plain": ENGINE_RE}
    prompt = "please deploy the fix to prod"
    assert [m.skill for m in activator.match_skills(prompt, second).matches] == ["lazy"]
    assert [m.skill for m in activator.match_skills(prompt, first).matches] == ["lazy"]


# -- user-level rules ------------------------------------------------------------------------


def test_the_persons_own_rules_are_read_and_the_project_overrides_them(
    home: HRMHome, tmp_path: Path, own_claude_config: Path
) -> None:
    assert user_rule_path() == own_claude_config / "skills" / "skill-rules.json"
    rules_file(
        user_rule_path(),
        mine=rule(keywords=["deploy"], description="from the person's own file"),
        shared=rule(keywords=["deploy"], description="the person's version"),
    )
    project = tmp_path / "app"
    rules_file(project / ".claude" / "skills" / "skill-rules.json",
               shared=rule(keywords=["deploy"], description="the project's version"))
    orchestrator = HookOrchestrator(home, HookSettings(skill_match_budget_ms=30_000))
    response = orchestrator.on_user_prompt_submit(
        UserPrompt(text="deploy the service", session_id="s", project_path=project)
    )
    context = response.additional_context or ""
    assert "from the person's own file" in context
    assert "the project's version" in context and "the person's version" not in context


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"skills": {"slow": rule(patterns=[r"(a|aa)*\1c"])}}, id="pathological"),
        pytest.param({"skills": {"typed": {"promptTriggers": {"keywords": "deploy"}}}},
                     id="wrong-types"),
        pytest.param({"skills": ["not", "a", "map"]}, id="wrong-shape"),
        pytest.param("{ not json", id="not-json"),
    ],
)
def test_a_bad_user_rules_file_is_skipped_with_a_warning_never_a_block(
    content: object, home: HRMHome, tmp_path: Path
) -> None:
    path = user_rule_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    project = tmp_path / "app"
    rules_file(project / ".claude" / "skills" / "skill-rules.json",
               good=rule(keywords=["deploy"], description="still matched"))
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(project),
               "prompt": "deploy " + "a" * 39}
    env = {"HRM_HOME": str(home.root), "CLAUDE_PROJECT_DIR": str(project),
           "CLAUDE_CONFIG_DIR": str(path.parent.parent)}
    run = within(60, lambda: answer_hook(json.dumps(payload).encode(), [], environ=env,
                                         cwd=project))
    answer = json.loads(run.output or "{}")
    assert "decision" not in answer
    assert "still matched" in answer["hookSpecificOutput"]["additionalContext"]
    log = (home.logs_dir / "hooks.log").read_text(encoding="utf-8")
    assert "skill rules" in log and str(path) in log
