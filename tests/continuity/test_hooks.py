"""HookOrchestrator: what each moment of a session does, against a real home."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hrm.continuity.handoff_store import HandoffStore
from hrm.continuity.handoffs import (
    ContextInfo,
    HandoffData,
    ResumeInstructions,
    SessionMetadata,
    TaskInfo,
    TaskStatus,
)
from hrm.continuity.hooks import (
    FileInfo,
    HookAction,
    HookOrchestrator,
    HookSettings,
    SessionCheckpoint,
    SessionContext,
    SessionMode,
    StopSignal,
    UserPrompt,
)
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput
from hrm.home import HRMHome
from hrm.trust import TrustStore


class GatedActivator:
    """A SkillActivator whose matching waits on an event (to overrun the budget) or fails."""

    def __init__(self, *, gate: threading.Event | None = None, error: Exception | None = None):
        from hrm.continuity.skills import SkillActivator

        self.real = SkillActivator()
        self.gate = gate
        self.error = error
        self.prompts: list[str] = []

    def load_rules(self, paths: list[Path]) -> Any:
        return self.real.load_rules(paths)

    def match_skills(self, prompt: str, rules: Any, *, budget_ms: int = 1000) -> Any:
        self.prompts.append(prompt)
        if self.gate is not None:
            self.gate.wait(10)
        if self.error is not None:
            raise self.error
        return self.real.match_skills(prompt, rules, budget_ms=budget_ms)

    def apply_enforcement(self, matches: Any, **options: Any) -> Any:
        return self.real.apply_enforcement(matches, **options)


def write_rules(project: Path, **skills: tuple[str, list[str]]) -> None:
    """Project rules in Claude Code's place: skill -> (enforcement, keywords)."""
    path = project / ".claude" / "skills" / "skill-rules.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    rules = {
        name: {
            "type": "domain",
            "enforcement": enforcement,
            "priority": "high",
            "description": f"The {name} skill",
            "promptTriggers": {"keywords": keywords},
        }
        for name, (enforcement, keywords) in skills.items()
    }
    path.write_text(json.dumps({"version": "1.0", "skills": rules}), encoding="utf-8")


def remember(home: HRMHome, *items: tuple[str, str]) -> None:
    with LearningsRepository.open(home, embeddings="off") as repo:
        for content, kind in items:
            repo.store_learning(LearningInput(content=content, type=kind))


def handoff(project: Path, description: str, steps: list[str]) -> HandoffData:
    start = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)
    return HandoffData(
        session=SessionMetadata(id="prev", started_at=start, ended_at=start, duration_seconds=0),
        task=TaskInfo(description=description, status=TaskStatus.BLOCKED),
        context=ContextInfo(project_path=str(project)),
        resume=ResumeInstructions(next_steps=steps),
    )


# The product's budgets (300 ms to 2 s) are wall-clock; on a loaded machine the work they bound
# can overrun them, and then a test about what a hook says would fail on speed. So tests get a
# minute each, and a test about overrunning sets a small budget with a fake that waits.
UNHURRIED_BUDGETS = {
    "memory_search_budget_ms": 60_000,
    "skill_match_budget_ms": 60_000,
    "session_end_budget_ms": 60_000,
    "prompt_recall_budget_ms": 60_000,
}


def orchestrator(home: HRMHome, activator: Any = None, **settings: Any) -> HookOrchestrator:
    settings = {**UNHURRIED_BUDGETS, **settings}
    if activator is None:
        return HookOrchestrator(home, HookSettings(**settings))
    return HookOrchestrator(home, HookSettings(**settings), skill_activator=lambda: activator)


def start(project: Path) -> SessionContext:
    return SessionContext(session_id="s", mode=SessionMode.RESUME, project_path=project)


def prompt(text: str, project: Path) -> UserPrompt:
    return UserPrompt(text=text, session_id="s", project_path=project)


# -- SessionStart --------------------------------------------------------------------------------


def test_session_start_injects_handoff_and_learnings(home: HRMHome, tmp_path: Path) -> None:
    project = tmp_path / "fetcher"
    project.mkdir()
    HandoffStore(home).write(handoff(project, "Add retry to the fetcher", ["write the backoff test"]))
    HandoffStore(home).write(handoff(tmp_path / "other", "Unrelated work", ["nothing"]))
    remember(
        home,
        ("The fetcher retries must use jittered backoff", "CODEBASE_PATTERN"),
        ("Bananas are yellow", "USER_PREFERENCE"),
    )
    orch = orchestrator(home)
    response = orch.on_session_start(start(project))
    text = response.additional_context or ""
    assert response.action is HookAction.SUGGEST
    assert "Add retry to the fetcher" in text
    assert "write the backoff test" in text
    assert "Status: BLOCKED" in text
    assert "jittered backoff" in text
    assert "Unrelated work" not in text
    assert text.index("Latest handoff") < text.index("Learnings")
    assert response.metadata["memories_loaded"] >= 1
    assert orch.failures == [] or all("ledger" in what for what, _ in orch.failures)


def test_every_session_starts_with_the_persons_standing_preferences(
    home: HRMHome, tmp_path: Path
) -> None:
    # Their words match no project's name, so the project search never found them.
    remember(
        home,
        ("Always run the tests before committing", "USER_PREFERENCE"),
        ("From now on, answer in British English", "USER_PREFERENCE"),
        ("The tests took long yesterday", "USER_PREFERENCE"),  # an observation, not stated
        ("Dark mode seems better for late-night work", "USER_PREFERENCE"),  # not confirmed
    )
    project = tmp_path / "fetcher"
    project.mkdir()
    response = orchestrator(home).on_session_start(start(project))
    text = response.additional_context or ""
    section = text[text.index("## Your standing preferences"):]
    assert "Always run the tests before committing" in section
    assert "answer in British English" in section
    assert "took long yesterday" not in text and "Dark mode" not in text
    assert response.metadata["preferences_loaded"] == 2


def test_no_learnings_at_session_start_means_no_preferences_either(
    home: HRMHome, tmp_path: Path
) -> None:
    remember(home, ("Always run the tests before committing", "USER_PREFERENCE"))
    response = orchestrator(home, session_start_max_learnings=0).on_session_start(
        start(tmp_path)
    )
    assert "run the tests" not in (response.additional_context or "")


def test_session_start_with_nothing_known_is_silent(home: HRMHome, tmp_path: Path) -> None:
    response = orchestrator(home).on_session_start(start(tmp_path))
    assert response.action is HookAction.CONTINUE
    assert response.additional_context is None


def test_session_start_context_is_capped(home: HRMHome, tmp_path: Path) -> None:
    steps = [f"step {i} " + "x" * 250 for i in range(10)]
    HandoffStore(home).write(handoff(tmp_path, "Big " + "y" * 400, steps))
    remember(home, *((f"{tmp_path.name} fact {i} " + "z" * 380, "CODEBASE_PATTERN") for i in range(5)))
    response = orchestrator(home, additional_context_max_chars=1500).on_session_start(start(tmp_path))
    text = response.additional_context or ""
    assert 0 < len(text) <= 1500
    assert "Latest handoff" in text


def test_session_start_survives_a_broken_handoff_store(home: HRMHome, tmp_path: Path) -> None:
    remember(home, (f"{tmp_path.name} builds with make", "CODEBASE_PATTERN"))

    class Broken:
        def latest(self, **kwargs: Any) -> None:
            raise OSError("disk on fire")

    orch = HookOrchestrator(home, HookSettings(), handoff_store=Broken)
    response = orch.on_session_start(start(tmp_path))
    assert "builds with make" in (response.additional_context or "")
    assert any(what == "latest handoff" for what, _ in orch.failures)


def test_session_start_answers_without_a_search_that_overruns(home: HRMHome, tmp_path: Path) -> None:
    HandoffStore(home).write(handoff(tmp_path, "Keep going", ["next"]))
    remember(home, ("anything", "CODEBASE_PATTERN"))
    release = threading.Event()

    class Slow:
        def search_memories(self, *args: Any, **kwargs: Any) -> Any:
            release.wait(10)
            raise RuntimeError("too late")

    orch = HookOrchestrator(home, HookSettings(memory_search_budget_ms=1000), learnings=Slow)
    response = orch.on_session_start(start(tmp_path))
    release.set()
    assert orch.abandoned_workers == 1
    assert response.metadata["memories_loaded"] == 0
    assert response.metadata["handoff_loaded"] is True
    assert "Keep going" in (response.additional_context or "")


def test_session_start_includes_the_active_ledger(home: HRMHome, tmp_path: Path) -> None:
    pytest.importorskip("hrm.continuity.continuity_ledger")
    ledgers = tmp_path / "thoughts" / "ledgers"
    ledgers.mkdir(parents=True)
    (ledgers / "CONTINUITY_CLAUDE-auth.md").write_text(
        "# Session: auth\n## Goal\nShip login\n## State\n- Now: [->] token refresh\n",
        encoding="utf-8",
    )
    response = orchestrator(home).on_session_start(start(tmp_path))
    assert response.metadata["ledger_loaded"] is True
    assert "Active continuity ledger" in (response.additional_context or "")


# -- UserPromptSubmit ----------------------------------------------------------------------------


def test_prompt_with_suggestions_adds_context(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, **{"test-driven-development": ("suggest", ["failing test"])})
    response = orchestrator(home).on_user_prompt_submit(prompt("add a failing test first", tmp_path))
    text = response.additional_context or ""
    assert response.action is HookAction.SUGGEST
    assert "test-driven-development (high, suggest)" in text
    assert "failing test" in text
    assert response.suggestions[0].skill == "test-driven-development"


def test_warn_rules_are_listed_as_available(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, linting=("warn", ["lint"]))
    response = orchestrator(home).on_user_prompt_submit(prompt("lint the repo", tmp_path))
    assert response.action is HookAction.SUGGEST
    assert "Skills available" in (response.additional_context or "")


def test_block_rule_blocks_with_a_reason_naming_the_skill(home: HRMHome, tmp_path: Path) -> None:
    write_rules(
        tmp_path,
        **{"security-review": ("block", ["deploy"]), "docs": ("suggest", ["prod"])},
    )
    TrustStore(home).trust(tmp_path)  # the project's own rules block only once trusted (D220)
    orch = orchestrator(home, enforcement="block")
    response = orch.on_user_prompt_submit(prompt("deploy to prod", tmp_path))
    assert response.action is HookAction.BLOCK
    assert "security-review" in (response.blocking_reason or "")
    assert response.additional_context is None


def test_no_match_and_no_learnings_continue(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, docs=("suggest", ["documentation"]))
    response = orchestrator(home).on_user_prompt_submit(prompt("hello", tmp_path))
    assert response.action is HookAction.CONTINUE
    assert response.additional_context is None


def test_without_rule_files_nothing_is_matched_or_logged(home: HRMHome, tmp_path: Path) -> None:
    (home.hot_config_dir / "skill-rules.json").unlink(missing_ok=True)
    activator = GatedActivator()
    orch = orchestrator(home, activator)
    response = orch.on_user_prompt_submit(prompt("anything at all", tmp_path))
    assert response.action is HookAction.CONTINUE
    assert activator.prompts == []
    assert orch.failures == []


def test_empty_prompt_continues_without_matching(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, guard=("block", ["anything"]))
    activator = GatedActivator()
    response = orchestrator(home, activator).on_user_prompt_submit(prompt("  \n", tmp_path))
    assert response.action is HookAction.CONTINUE
    assert activator.prompts == []


def test_matching_overrun_continues_and_never_blocks(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, guard=("block", ["anything"]))
    gate = threading.Event()
    orch = orchestrator(home, GatedActivator(gate=gate), skill_match_budget_ms=30)
    response = orch.on_user_prompt_submit(prompt("anything", tmp_path))
    gate.set()
    assert response.action is HookAction.CONTINUE
    assert orch.abandoned_workers == 1
    assert response.metadata["matching_ready"] is False


def test_failing_matcher_continues(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, guard=("block", ["anything"]))
    orch = orchestrator(home, GatedActivator(error=ValueError("bad rule file")))
    response = orch.on_user_prompt_submit(prompt("anything", tmp_path))
    assert response.action is HookAction.CONTINUE
    assert any(what == "skill matching" for what, _ in orch.failures)


def test_broken_rule_file_is_logged_and_others_still_match(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, docs=("suggest", ["readme"]))
    (tmp_path / ".hrm").mkdir()
    (tmp_path / ".hrm" / "skill-rules.json").write_text("{oops", encoding="utf-8")
    response = orchestrator(home).on_user_prompt_submit(prompt("update the readme", tmp_path))
    assert response.action is HookAction.SUGGEST
    assert "docs" in (response.additional_context or "")


def test_prompt_recalls_related_learnings(home: HRMHome, tmp_path: Path) -> None:
    remember(home, ("Migrations must never be edited once released", "ARCHITECTURAL_DECISION"))
    orch = orchestrator(home, prompt_recall_budget_ms=10_000, skill_match_budget_ms=10_000)
    response = orch.on_user_prompt_submit(prompt("can I edit the migration?", tmp_path))
    assert response.action is HookAction.SUGGEST
    assert "never be edited" in (response.additional_context or "")


def test_huge_prompt_is_bounded_for_recall(home: HRMHome, tmp_path: Path) -> None:
    remember(home, ("parsers need fuzz tests", "CODEBASE_PATTERN"))
    write_rules(tmp_path, fuzzing=("suggest", ["fuzz"]))
    activator = GatedActivator()
    text = "parser " + "lorem ipsum " * 90_000
    orch = orchestrator(
        home, activator, prompt_recall_budget_ms=10_000, skill_match_budget_ms=10_000
    )
    response = orch.on_user_prompt_submit(prompt(text, tmp_path))
    assert activator.prompts == [text]
    assert "fuzz tests" in (response.additional_context or "")


# -- PostToolUse ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "kind"),
    [
        ("docs/handoffs/x/2026-01-12_y.md", "handoff"),
        ("notes/session-handoff.yaml", "handoff"),
        ("thoughts/shared/plans/auth.md", "plan"),
        ("docs/plan-auth.md", "plan"),
        ("thoughts/ledgers/CONTINUITY_CLAUDE-auth.md", "ledger"),
        ("CONTINUITY.md", "ledger"),
    ],
)
def test_artifacts_are_indexed(home: HRMHome, tmp_path: Path, relative: str, kind: str) -> None:
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Artifact\nThe zebra protocol needs a fallback.\n", encoding="utf-8")
    info = FileInfo(path=path, content_preview="", file_type="markdown", session_id="s", project_path=tmp_path)
    response = orchestrator(home).on_post_write(info)
    assert response.indexed is True
    assert response.artifact_type == kind
    with LearningsRepository.open(home, embeddings="off") as repo:
        found = repo.search_artifacts("zebra protocol")
    assert [f["path"] for f in found] == [str(path)]


@pytest.mark.parametrize("relative", ["src/app.py", "docs/explanation.md", "README.md", "plans/a.txt"])
def test_other_files_are_not_indexed(home: HRMHome, tmp_path: Path, relative: str) -> None:
    info = FileInfo(
        path=tmp_path / relative, content_preview="", file_type="other", session_id="s", project_path=tmp_path
    )
    response = orchestrator(home).on_post_write(info)
    assert response.indexed is False
    assert response.artifact_type is None


def test_unreadable_artifact_is_not_indexed(home: HRMHome, tmp_path: Path) -> None:
    info = FileInfo(
        path=tmp_path / "handoffs" / "gone.md",
        content_preview="x",
        file_type="markdown",
        session_id="s",
        project_path=tmp_path,
    )
    orch = orchestrator(home)
    response = orch.on_post_write(info)
    assert response.indexed is False
    assert any(what == "read artifact" for what, _ in orch.failures)


# -- PreCompact, SessionEnd, Stop ----------------------------------------------------------------


def transcript(path: Path) -> Path:
    import json

    entries = [
        {"type": "user", "message": {"role": "user", "content": "Port the CLI to typer"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "name": "Write", "input": {"file_path": "/p/cli.py"}},
                    {"type": "text", "text": "Next:\n- wire the install command"},
                ],
            },
        },
    ]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["pre_compact", "session_end"])
def test_checkpoints_write_a_handoff(home: HRMHome, tmp_path: Path, kind: str) -> None:
    checkpoint = SessionCheckpoint(
        kind=kind,  # type: ignore[arg-type]
        session_id="sess-9",
        project_path=tmp_path,
        transcript_path=transcript(tmp_path / "t.jsonl"),
        trigger="auto",
    )
    orch = orchestrator(home)
    method = orch.on_pre_compact if kind == "pre_compact" else orch.on_session_end
    response = method(checkpoint)
    assert response.action is HookAction.CONTINUE
    found = HandoffStore(home).latest(project_path=str(tmp_path))
    assert found is not None
    assert str(found[0]) == response.metadata["handoff_path"]
    assert found[1].task.description == "Port the CLI to typer"
    assert found[1].resume.next_steps == ["wire the install command"]


def test_checkpoint_without_transcript_writes_nothing(home: HRMHome, tmp_path: Path) -> None:
    checkpoint = SessionCheckpoint(kind="session_end", session_id="s", project_path=tmp_path)
    response = orchestrator(home).on_session_end(checkpoint)
    assert response.metadata["handoff_path"] is None
    assert HandoffStore(home).latest() is None


@pytest.mark.parametrize("active", [True, False])
def test_stop_never_blocks(home: HRMHome, tmp_path: Path, active: bool) -> None:
    response = orchestrator(home).on_stop(
        StopSignal(session_id="s", stop_hook_active=active, project_path=tmp_path)
    )
    assert response.action is HookAction.CONTINUE
    assert response.additional_context is None


def test_recall_that_overruns_its_budget_is_left_out(home: HRMHome, tmp_path: Path) -> None:
    write_rules(tmp_path, docs=("suggest", ["readme"]))
    remember(home, ("the readme is generated", "CODEBASE_PATTERN"))
    release = threading.Event()

    class Slow:
        def search_memories(self, *args: Any, **kwargs: Any) -> Any:
            release.wait(10)
            raise RuntimeError("too late")

    orch = HookOrchestrator(
        home, HookSettings(prompt_recall_budget_ms=20, skill_match_budget_ms=10_000), learnings=Slow
    )
    response = orch.on_user_prompt_submit(prompt("update the readme", tmp_path))
    release.set()
    assert response.action is HookAction.SUGGEST
    assert "docs" in (response.additional_context or "")
    assert response.metadata["memories_loaded"] == 0
    assert orch.abandoned_workers == 1


def test_settings_from_continuity_config() -> None:
    from hrm.config import ContinuityConfig

    cfg = ContinuityConfig(
        memory_search_budget_ms=500,
        skill_match_budget_ms=200,
        skill_rules=["rules.json"],
        additional_context_max_chars=50_000,
        embeddings="auto",
    )
    settings = HookSettings.from_continuity(cfg)
    assert settings.memory_search_budget_ms == 500
    assert settings.skill_match_budget_ms == 200
    assert settings.skill_rules == ("rules.json",)
    assert settings.context_limit == 10_000
    assert settings.embeddings == "off"
