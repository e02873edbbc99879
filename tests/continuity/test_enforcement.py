"""Blocks only where the person wants them; capture only where the person allows it.

Issue 31: with Continuous-Claude's real rules (``systematic-debugging``, ``databases`` and
``code-review`` marked ``enforcement: "block"``) ordinary prompts were erased. These tests run
the real hook entry (payload bytes in, Claude Code's JSON out) against that file as it is.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hrm.config import load_config
from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.hook_entry import answer_hook
from hrm.continuity.hooks import (
    FileInfo,
    HookOrchestrator,
    HookSettings,
    SessionCheckpoint,
)
from hrm.home import HRMHome
from hrm.trust import TrustStore

RULES = Path(__file__).resolve().parents[1] / "fixtures" / "continuous-claude"
PR133 = RULES / "skill-rules.v3-pr133.json"


@dataclass(frozen=True)
class Case:
    prompt: str
    rule: str
    """The rule marked block that the prompt matches."""


CASES = [
    pytest.param(Case("Fix the typo in the README", "systematic-debugging"), id="typo"),
    pytest.param(Case("Add an index to the users table", "databases"), id="index"),
    pytest.param(Case("Open a PR for this branch", "code-review"), id="pr"),
    pytest.param(Case("Why is the login test failing?", "systematic-debugging"), id="failing"),
]


def configure(home: HRMHome, continuity: str = "") -> None:
    """The home's config: a matching budget no machine's load can overrun (the hook answers
    with nothing when matching overruns it), and `continuity` keys."""
    home.config_path.write_text(f"continuity:\n  skill_match_budget_ms: 60000\n{continuity}")


@pytest.fixture
def project(tmp_path: Path, home: HRMHome) -> Path:
    """A project with Continuous-Claude's rules where Claude Code keeps them."""
    configure(home)
    root = tmp_path / "project"
    (root / ".claude" / "skills").mkdir(parents=True)
    shutil.copyfile(PR133, root / ".claude" / "skills" / "skill-rules.json")
    return root


def ask(home: HRMHome, project: Path, text: str) -> dict[str, Any]:
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": text,
               "cwd": str(project)}
    env = {"HRM_HOME": str(home.root), "CLAUDE_PROJECT_DIR": str(project)}
    run = answer_hook(json.dumps(payload).encode(), [], environ=env, cwd=project)
    assert run.output is not None
    answer: dict[str, Any] = json.loads(run.output)
    return answer


def context_of(answer: dict[str, Any]) -> str:
    return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))


@pytest.mark.parametrize("case", CASES)
def test_by_default_a_block_rule_is_a_required_step_never_a_block(
    home: HRMHome, project: Path, case: Case
) -> None:
    answer = ask(home, project, case.prompt)
    assert "decision" not in answer
    context = context_of(answer)
    required = context.split("## REQUIRED before responding (skill rules marked block)\n", 1)
    assert len(required) == 2, context
    assert required[1].splitlines()[0].startswith(f"- {case.rule} (critical, block)")
    assert "ACTION: use the required skill(s) above BEFORE responding." in context


@pytest.mark.parametrize("case", CASES)
def test_opted_in_a_trusted_projects_rule_blocks_naming_the_rule_and_the_way_out(
    home: HRMHome, project: Path, case: Case
) -> None:
    configure(home, "  enforcement: block\n")
    TrustStore(home).trust(project)
    answer = ask(home, project, case.prompt)
    assert answer["decision"] == "block"
    reason = answer["reason"]
    rules_file = project / ".claude" / "skills" / "skill-rules.json"
    assert f"the skill rule '{case.rule}' (enforcement: block in {rules_file})" in reason
    assert f"set `continuity.enforcement: suggest` in {home.config_path}" in reason


def test_opted_in_an_untrusted_projects_rule_is_required_not_blocking_and_said_once(
    home: HRMHome, project: Path
) -> None:
    configure(home, "  enforcement: block\n")
    first = ask(home, project, "Fix the typo in the README")
    assert "decision" not in first
    context = context_of(first)
    assert "REQUIRED before responding" in context
    assert (
        "hrm: the project's skill rule 'systematic-debugging' in "
        f"{project / '.claude' / 'skills' / 'skill-rules.json'} is marked block, but the "
        "project is not trusted" in context
    )
    second = ask(home, project, "Why is the login test failing?")
    assert "decision" not in second and "not trusted" not in context_of(second)


def test_the_homes_own_rules_block_when_opted_in(home: HRMHome, tmp_path: Path) -> None:
    configure(home, "  enforcement: block\n")
    shutil.copyfile(PR133, home.hot_config_dir / "skill-rules.json")
    answer = ask(home, tmp_path, "Add an index to the users table")
    assert answer["decision"] == "block" and "'databases'" in answer["reason"]


def test_a_project_cannot_opt_itself_into_blocking(home: HRMHome, project: Path) -> None:
    (project / ".hrm").mkdir()
    (project / ".hrm" / "config.yaml").write_text("continuity:\n  enforcement: block\n")
    first = ask(home, project, "Open a PR for this branch")
    assert "decision" not in first
    assert "ignored continuity.enforcement from" in context_of(first)  # said to the assistant
    assert "ignored" not in context_of(ask(home, project, "Open a PR for this branch"))


# -- capture -----------------------------------------------------------------------------------


def checkpoint(project: Path) -> SessionCheckpoint:
    transcript = project / "t.jsonl"
    said = {"type": "user", "message": {"role": "user", "content": "Port the CLI to typer"}}
    transcript.write_text(json.dumps(said) + "\n", encoding="utf-8")
    return SessionCheckpoint(
        kind="session_end", session_id="s", project_path=project, transcript_path=transcript
    )


@pytest.mark.parametrize("capture", ["on", "off"])
def test_capture_off_stores_no_handoff_and_no_artifact(
    home: HRMHome, tmp_path: Path, capture: str
) -> None:
    orch = HookOrchestrator(home, HookSettings(capture=capture, session_end_budget_ms=60_000))
    ended = orch.on_session_end(checkpoint(tmp_path))
    compacted = orch.on_pre_compact(checkpoint(tmp_path))
    plan = tmp_path / "thoughts" / "shared" / "plans" / "plan.md"
    plan.parent.mkdir(parents=True)
    plan.write_text("# Plan\n\n- step one\n")
    indexed = orch.on_post_write(FileInfo(
        path=plan, content_preview="# Plan", file_type="md", session_id="s", project_path=tmp_path
    ))
    orch.close()
    stored = HandoffStore(home).latest(project_path=str(tmp_path))
    if capture == "off":
        assert stored is None
        assert ended.metadata["capture"] == compacted.metadata["capture"] == "off"
        assert indexed.indexed is False
    else:
        assert stored is not None and indexed.indexed is True


@pytest.mark.parametrize(
    ("where", "expected"),
    [("home", "off"), ("project", "off")],
)
def test_capture_can_be_turned_off_globally_or_for_a_project_without_trust(
    home: HRMHome, tmp_path: Path, where: str, expected: str
) -> None:
    target = home.config_path if where == "home" else tmp_path / ".hrm" / "config.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("continuity:\n  capture: off\n")
    resolved = load_config(home, tmp_path, environ={})
    assert HookSettings.from_continuity(resolved.config.continuity).capture == expected
    assert resolved.ignored == []


def test_an_untrusted_project_cannot_turn_capture_back_on(home: HRMHome, tmp_path: Path) -> None:
    home.config_path.write_text("continuity:\n  capture: off\n")
    (tmp_path / ".hrm").mkdir()
    (tmp_path / ".hrm" / "config.yaml").write_text("continuity:\n  capture: on\n")
    resolved = load_config(home, tmp_path, environ={})
    assert resolved.config.continuity.capture == "off"
    assert resolved.ignored[0].keys == ("continuity.capture",)
