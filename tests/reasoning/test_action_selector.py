"""ActionSelector: one primary with a fallback, stance weights, 001's voting rule, micro-batches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reasoning.actions import STANCE_WEIGHTS, ActionSelector
from hrm.reasoning.types import CandidateAction, InputClassification, PrioritySignals
from hrm.types import Complexity, ConflictLevel, Stakes, Stance

selector = ActionSelector()
SIGNALS = ("urgency", "dependency", "momentum", "energy_cost", "alignment")
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def candidate(cid: str, action_type: str = "respond", **signals: float | bool | list[str]) -> (
    CandidateAction
):
    return CandidateAction(id=cid, action_type=action_type, description=cid, **signals)  # type: ignore[arg-type]


def risky(irreversible: bool = True) -> InputClassification:
    return InputClassification(
        complexity=Complexity.SIMPLE,
        uncertainty=0.1,
        conflict=ConflictLevel.NONE,
        stakes=Stakes.HIGH,
        horizon="immediate",
        domain=["ops"],
        confidence=0.8,
        irreversible=irreversible,
    )


@pytest.mark.parametrize("stance", list(Stance))
def test_stance_weights_sum_to_one(stance: Stance) -> None:
    weights = STANCE_WEIGHTS[stance]
    assert set(weights) == set(SIGNALS)
    assert sum(weights.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("stance", "winner"),
    [
        (Stance.EXECUTION, "flow"),
        (Stance.SENSEMAKING, "unblock"),
        (Stance.DISCOVERY, "urgent"),
        (Stance.EVALUATION, "cheap"),
    ],
)
def test_stance_changes_the_winner(stance: Stance, winner: str) -> None:
    candidates = [
        candidate("flow", "respond", momentum_score=1.0, alignment_score=1.0, energy_cost=0.9),
        candidate("unblock", "execute", dependency_score=1.0, energy_cost=0.3, alignment_score=0.2),
        candidate("urgent", "delegate", urgency=1.0, dependency_score=0.8, energy_cost=0.9,
                  alignment_score=0.0),
        candidate("cheap", "ask", energy_cost=0.0, alignment_score=1.0),
    ]
    assert selector.select(candidates, stance=stance).primary.id == winner


def test_ties_break_by_candidate_order() -> None:
    chosen = selector.select([candidate("a"), candidate("b", "ask")], stance=Stance.EXECUTION)
    assert chosen.primary.id == "a"
    assert chosen.fallback is not None and chosen.fallback.id == "b"


def test_fallback_has_a_different_action_type_or_is_made() -> None:
    only_responds = [candidate("r1", momentum_score=1.0), candidate("r2")]
    chosen = selector.select(only_responds)
    assert chosen.primary.id == "r1"
    assert chosen.fallback is not None and chosen.fallback.action_type == "ask"
    alone = selector.select([candidate("x", "execute")])
    assert alone.fallback is not None and alone.fallback.action_type == "respond"


def test_empty_candidates_select_wait() -> None:
    chosen = selector.select([])
    assert chosen.primary.action_type == "wait"
    assert chosen.fallback is not None and chosen.fallback.action_type == "ask"


def test_rationale_names_the_winner_the_signals_and_the_runner_up() -> None:
    chosen = selector.select(
        [candidate("go", momentum_score=1.0), candidate("later", "ask")], stance=Stance.EXECUTION
    )
    assert "go (respond)" in chosen.rationale
    assert "momentum" in chosen.rationale and "execution weights" in chosen.rationale
    assert "next later" in chosen.rationale


def test_voting_only_when_high_stakes_close_scores_and_irreversible() -> None:
    close = [candidate("a", momentum_score=0.5), candidate("b", "execute", momentum_score=0.45)]
    far = [candidate("a", momentum_score=1.0, urgency=1.0), candidate("b", "execute",
                                                                      energy_cost=1.0)]
    assert selector.select(close, classification=risky()).use_voting
    assert not selector.select(close, classification=risky(irreversible=False)).use_voting
    assert not selector.select(far, classification=risky()).use_voting
    assert not selector.select(close[:1], classification=risky()).use_voting
    assert not selector.select(close).use_voting
    assert selector.should_use_voting(close, classification=risky())


def test_micro_batch_only_of_atomic_mutually_coupled_actions() -> None:
    a = candidate("a", momentum_score=1.0, atomic=True, coupled_with=["b", "c"])
    b = candidate("b", "execute", momentum_score=0.9, atomic=True, coupled_with=["a", "c"])
    c = candidate("c", "execute", momentum_score=0.8, atomic=True, coupled_with=["a"])
    d = candidate("d", "execute", momentum_score=0.7, atomic=True, coupled_with=["a", "b", "c"])
    chosen = selector.select([a, b, c, d], stance=Stance.EXECUTION)
    assert chosen.is_batch()
    assert [m.id for m in chosen.batch or []] == ["a", "b", "c"]  # max 3
    assert chosen.fallback is not None and chosen.fallback.id not in {"a", "b", "c"}


def test_no_batch_for_unrelated_or_non_atomic_actions() -> None:
    unrelated = [
        candidate("a", momentum_score=1.0, atomic=True),
        candidate("b", "execute", momentum_score=0.9, atomic=True),
    ]
    assert not selector.select(unrelated).is_batch()
    not_atomic = [
        candidate("a", momentum_score=1.0, coupled_with=["b"]),
        candidate("b", "execute", momentum_score=0.9, atomic=True, coupled_with=["a"]),
    ]
    assert not selector.select(not_atomic).is_batch()
    partly = [
        candidate("a", momentum_score=1.0, atomic=True, coupled_with=["b", "c"]),
        candidate("b", "execute", momentum_score=0.9, atomic=True),
        candidate("c", "execute", momentum_score=0.8, atomic=True),
    ]
    assert [m.id for m in selector.select(partly).batch or []] == ["a", "b"]


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries({name: unit for name in SIGNALS}),
    st.sampled_from([None, *Stance]),
    st.sampled_from(SIGNALS),
    unit,
)
def test_priority_is_in_unit_interval_and_monotone_in_each_signal(
    values: dict[str, float], stance: Stance | None, signal: str, bump: float
) -> None:
    weights = selector.weights_for(stance)
    base = PrioritySignals(**values)
    score = base.compute_score(weights)
    assert 0.0 <= score <= 1.0
    raised = dict(values)
    raised[signal] = min(1.0, values[signal] + bump)
    higher = PrioritySignals(**raised).compute_score(weights)
    if signal == "energy_cost":
        assert higher <= score + 1e-12  # cost counts against
    else:
        assert higher >= score - 1e-12


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["respond", "execute", "delegate", "ask", "wait"]), unit, unit),
        max_size=6,
    ),
    st.sampled_from([None, *Stance]),
)
def test_exactly_one_primary_and_always_a_fallback(
    specs: list[tuple[str, float, float]], stance: Stance | None
) -> None:
    candidates = [
        candidate(f"c{i}", kind, momentum_score=m, urgency=u) for i, (kind, m, u) in
        enumerate(specs)
    ]
    chosen = selector.select(candidates, stance=stance)
    assert chosen.primary is not None
    assert chosen.fallback is not None
    assert chosen.fallback.action_type != chosen.primary.action_type
    assert 0.0 <= chosen.priority_score <= 1.0
    scores = [selector.score(c, stance) for c in candidates]
    if candidates:
        assert chosen.priority_score == pytest.approx(max(scores), abs=1e-4)
