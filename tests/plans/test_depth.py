"""AdaptiveDepth: profile inference, TTL allocation and bidirectional adjustment."""

from __future__ import annotations

from dataclasses import dataclass

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings
from tests.plans.conftest import build_plan, set_status

from hrm.plans.depth import DEPTH_TTL, AdaptiveDepth
from hrm.plans.types import OrchestrationState, TaskProfile
from hrm.reasoning.types import InputClassification
from hrm.types import Complexity, ConflictLevel, Stakes


def classification(complexity: str, uncertainty: float, stakes: str) -> InputClassification:
    return InputClassification(
        complexity=Complexity(complexity), uncertainty=uncertainty, conflict=ConflictLevel.NONE,
        stakes=Stakes(stakes), horizon="immediate", domain=[], confidence=0.8,
    )


@dataclass
class Case:
    complexity: str
    uncertainty: float
    stakes: str
    depth: int
    confidence: str


@pytest.mark.parametrize("case", [
    pytest.param(Case("simple", 0.1, "low", 1, "low"), id="simple"),
    pytest.param(Case("moderate", 0.5, "medium", 2, "medium"), id="moderate"),
    pytest.param(Case("complex", 0.2, "low", 3, "low"), id="complex"),
    pytest.param(Case("moderate", 0.9, "medium", 3, "medium"), id="uncertain"),
    pytest.param(Case("complex", 0.9, "high", 5, "high"), id="everything"),
    pytest.param(Case("simple", 0.2, "high", 2, "high"), id="high-stakes"),
])
def test_depth_follows_the_classification(case: Case) -> None:
    depth = AdaptiveDepth(classification(case.complexity, case.uncertainty, case.stakes))
    profile = depth.infer_task_profile("anything")
    assert (profile.reasoning_depth, profile.confidence_requirement) == (case.depth, case.confidence)
    assert profile.reasons


def test_without_a_classification_the_text_is_classified() -> None:
    profile = AdaptiveDepth().infer_task_profile("What time is it?")
    assert profile.complexity == "simple" and 1 <= profile.reasoning_depth <= 5


def test_ttl_is_bounded_by_global_ttl_and_the_commitment() -> None:
    deep = TaskProfile(reasoning_depth=5)
    assert AdaptiveDepth().allocate_ttl(deep, 100) == DEPTH_TTL[5]
    assert AdaptiveDepth().allocate_ttl(deep, 7) == 7
    assert AdaptiveDepth(commitment_turns_remaining=3).allocate_ttl(deep, 100) == 3
    assert AdaptiveDepth(commitment_turns_remaining=0).allocate_ttl(deep, 100) == 0


def _depth_at(level: int) -> AdaptiveDepth:
    depth = AdaptiveDepth(classification("moderate", 0.5, "medium"))
    depth.infer_task_profile("x")  # baseline 2
    del level
    return depth


def test_a_blocked_step_deepens_and_a_clean_pass_returns_to_baseline() -> None:
    depth = _depth_at(2)
    base = TaskProfile(reasoning_depth=2)
    deeper = depth.update_task_profile(base, convergence_assessment={},
                                       semantic_validation={}, clarity_states=["BLOCKED"])
    assert deeper is not None and deeper.reasoning_depth == 3 and deeper.profile_version == 2
    back = depth.update_task_profile(deeper, convergence_assessment={},
                                     semantic_validation={}, clarity_states=["CLEAR"])
    assert back is not None and back.reasoning_depth == 2
    assert depth.update_task_profile(back, convergence_assessment={}, semantic_validation={},
                                     clarity_states=["CLEAR"]) is None


def test_blocking_validation_issues_deepen() -> None:
    updated = _depth_at(2).update_task_profile(
        TaskProfile(reasoning_depth=2), convergence_assessment={"converged": False},
        semantic_validation={"issues": [{"severity": "high"}]}, clarity_states=["CLEAR"])
    assert updated is not None and updated.reasoning_depth == 3


def _state(ttl_remaining: int, used: int, global_ttl: int, commitment: int | None,
           pending: int) -> OrchestrationState:
    plan = build_plan(*[(n, "execute", []) for n in range(1, pending + 2)])
    set_status(plan, **{f"step_{pending + 1}": "COMPLETE"})
    return OrchestrationState(plan=plan, ttl_remaining=ttl_remaining, global_ttl=global_ttl,
                              ttl_used=used, commitment_turns_remaining=commitment)


def test_raising_is_capped_by_what_the_global_ttl_leaves() -> None:
    depth = AdaptiveDepth()
    state = _state(ttl_remaining=1, used=5, global_ttl=8, commitment=None, pending=3)
    assert depth.adjust_ttl(TaskProfile(reasoning_depth=1), TaskProfile(reasoning_depth=2),
                            state, 8) == 3


def test_lowering_never_drops_below_the_pending_steps() -> None:
    depth = AdaptiveDepth()
    state = _state(ttl_remaining=5, used=1, global_ttl=30, commitment=None, pending=4)
    assert depth.adjust_ttl(TaskProfile(reasoning_depth=3), TaskProfile(reasoning_depth=2),
                            state, 30) == 4


@settings(max_examples=200, deadline=None)
@given(ttl=st.integers(0, 30), used=st.integers(0, 30), global_ttl=st.integers(0, 40),
       commitment=st.one_of(st.none(), st.integers(0, 40)), pending=st.integers(0, 6),
       old=st.integers(1, 5), new=st.integers(1, 5))
def test_adjusted_ttl_stays_within_the_run_caps(
    ttl: int, used: int, global_ttl: int, commitment: int | None, pending: int, old: int,
    new: int,
) -> None:
    depth = AdaptiveDepth(commitment_turns_remaining=commitment)
    state = _state(ttl, used, global_ttl, commitment, pending)
    after = depth.adjust_ttl(TaskProfile(reasoning_depth=old), TaskProfile(reasoning_depth=new),
                             state, global_ttl)
    assert 0 <= after <= max(0, state.step_cap() - used)
    if new > old:
        assert after >= min(ttl, max(0, state.step_cap() - used))
    if new < old:
        assert after <= ttl
