"""StrategySelector and EscalationManager: patterns win, rules otherwise, one step at a time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reasoning.escalation import ESCALATION_WEIGHTS, EscalationManager
from hrm.reasoning.strategy import STRATEGY_REQUIRES_AGENTS, StrategySelector, reducer_for
from hrm.reasoning.types import STRATEGIES, InputClassification, PatternMatch
from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes


def classification(
    *,
    complexity: Complexity = Complexity.SIMPLE,
    uncertainty: float = 0.1,
    conflict: ConflictLevel = ConflictLevel.NONE,
    stakes: Stakes = Stakes.LOW,
    domain: list[str] | None = None,
) -> InputClassification:
    return InputClassification(
        complexity=complexity,
        uncertainty=uncertainty,
        conflict=conflict,
        stakes=stakes,
        horizon="immediate",
        domain=domain or ["general"],
        confidence=0.7,
    )


selector = StrategySelector(pattern_match_threshold=0.7)
manager = EscalationManager()


def test_strategy_table_matches_the_spec_order() -> None:
    assert tuple(STRATEGY_REQUIRES_AGENTS) == STRATEGIES


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({}, "quick_answer", id="simple-clear"),
        pytest.param({"stakes": Stakes.HIGH}, "verification", id="high-stakes"),
        pytest.param({"complexity": Complexity.COMPLEX}, "decomposition", id="complex"),
        pytest.param({"uncertainty": 0.9}, "dialogue", id="very-unsure-simple"),
        pytest.param(
            {"uncertainty": 0.9, "complexity": Complexity.MODERATE}, "exploration", id="unsure"
        ),
        pytest.param({"conflict": ConflictLevel.LOW}, "exploration", id="conflict"),
    ],
)
def test_rules_pick_the_strategy(kwargs: dict[str, object], expected: str) -> None:
    selection = selector.select(classification(**kwargs), [])  # type: ignore[arg-type]
    assert selection.strategy == expected
    assert selection.requires_agents == STRATEGY_REQUIRES_AGENTS[expected]
    assert selection.pattern_id is None
    assert selection.reason


def test_pattern_above_threshold_wins_and_is_cited() -> None:
    matches = [
        PatternMatch("p-weak", 0.65, "verification", 9),
        PatternMatch("p-strong", 0.82, "exploration", 3),
    ]
    selection = selector.select(classification(), matches)
    assert selection.strategy == "exploration"
    assert selection.pattern_id == "p-strong"
    assert "p-strong" in selection.reason and "3 evidence" in selection.reason
    assert selection.confidence == pytest.approx(0.82)


def test_pattern_below_threshold_or_unknown_strategy_is_ignored() -> None:
    matches = [PatternMatch("p1", 0.69, "verification", 5), PatternMatch("p2", 0.99, "magic", 5)]
    assert selector.select(classification(), matches).strategy == "quick_answer"


@pytest.mark.parametrize(
    ("strategy", "domains", "reducer"),
    [
        ("exploration", ["code"], ReducerType.MERGE),
        ("verification", ["code"], ReducerType.VOTE),
        ("decomposition", ["code"], ReducerType.PASS_THROUGH),
        ("decomposition", ["code", "writing"], ReducerType.SYNTHESIZE),
        ("quick_answer", ["code"], None),
    ],
)
def test_reducer_per_strategy(strategy: str, domains: list[str], reducer: object) -> None:
    assert reducer_for(strategy, classification(domain=domains)) == reducer


def test_escalation_weights_sum_to_one() -> None:
    assert sum(ESCALATION_WEIGHTS.values()) == pytest.approx(1.0)


def test_escalation_moves_one_step_right_and_counts() -> None:
    start = selector.select(classification(), [])
    up = manager.escalate(start)
    assert up.strategy == "dialogue" and up.escalation_level == 1
    up2 = manager.escalate(manager.escalate(up))
    assert up2.strategy == "decomposition" and up2.requires_agents and up2.escalation_level == 3
    top = manager.escalate(up2)
    assert top.strategy == "verification" and top.suggested_reducer == ReducerType.VOTE
    assert manager.escalate(top) == top


def test_should_escalate_on_score_or_dimension_but_not_at_top() -> None:
    complex_input = classification(complexity=Complexity.COMPLEX)
    chosen = selector.select(complex_input, [])
    assert manager.should_escalate(complex_input, chosen)
    quiet = classification()
    assert not manager.should_escalate(quiet, selector.select(quiet, []))
    high = classification(stakes=Stakes.HIGH)
    assert not manager.should_escalate(high, selector.select(high, []))  # already verification


def test_deescalation_needs_a_strong_pattern() -> None:
    up = manager.escalate(selector.select(classification(), []))
    assert not manager.should_deescalate(up, 0.84)
    assert manager.should_deescalate(up, 0.85)
    down = manager.deescalate(up)
    assert down.strategy == "quick_answer" and down.escalation_level == 0
    assert manager.deescalate(down) == down
    assert not manager.should_deescalate(down, 0.99)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(list(Complexity)),
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from(list(ConflictLevel)),
    st.sampled_from(list(Stakes)),
)
def test_escalation_score_is_a_unit_interval(
    complexity: Complexity, uncertainty: float, conflict: ConflictLevel, stakes: Stakes
) -> None:
    c = classification(
        complexity=complexity, uncertainty=uncertainty, conflict=conflict, stakes=stakes
    )
    score = manager.escalation_score(c)
    assert 0.0 <= score <= 1.0
    if score >= manager.threshold:
        selection = selector.select(c, [])
        assert manager.should_escalate(c, selection) == (selection.strategy != STRATEGIES[-1])


def test_thresholds_come_from_config() -> None:
    from hrm.config import HRMConfig

    config = HRMConfig(escalation_threshold=0.9, pattern_match_threshold=0.5)
    assert EscalationManager.from_config(config).threshold == 0.9
    assert StrategySelector.from_config(config).pattern_match_threshold == 0.5
