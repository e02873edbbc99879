"""Reducers: pass-through, merge strategies, votes under each tiebreaker, synthesis."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_support import proposal

from hrm.errors import ErrorCode, HRMError
from hrm.llm.task_message import read_task_message
from hrm.runtime import (
    AgentOutput,
    MergeReducer,
    PassThroughReducer,
    SynthesisReducer,
    VotingReducer,
    reducer_for,
)
from hrm.runtime.reducers import answer_key
from hrm.testing import ScriptedAdapter
from hrm.types import ReducerType


def out(agent_id: str, content: Any, **metadata: Any) -> AgentOutput:
    return AgentOutput(agent_id=agent_id, output_type="proposal", content=content,
                       metadata=metadata)


def votes(*answers: str) -> list[AgentOutput]:
    return [out(f"v{i}", a) for i, a in enumerate(answers)]


def test_pass_through_returns_the_last_output() -> None:
    assert PassThroughReducer().reduce([out("a", "one"), out("b", "two")]) == "two"
    assert PassThroughReducer().reduce([]) is None


def test_concatenate_keeps_every_output_in_order() -> None:
    outputs = [out("a", "x"), out("b", "x"), out("c", "y")]
    assert MergeReducer("concatenate").reduce(outputs) == ["x", "x", "y"]


def test_dedupe_keeps_the_first_of_equal_answers_ignoring_case_and_spacing() -> None:
    outputs = [out("a", "Use  SQLite."), out("b", "use sqlite"), out("c", "Use Postgres")]
    assert MergeReducer("dedupe").reduce(outputs) == ["Use  SQLite.", "Use Postgres"]


def test_select_best_takes_the_most_confident_and_the_earlier_on_ties() -> None:
    outputs = [out("a", "low", confidence=0.2), out("b", "high", confidence=0.9),
               out("c", "also high", confidence=0.9), out("d", "none")]
    assert MergeReducer("select_best").reduce(outputs) == "high"
    assert MergeReducer("select_best").reduce([out("a", "x"), out("b", "y")]) == "x"
    assert MergeReducer("select_best").reduce([]) is None


def test_unknown_merge_strategy_is_refused() -> None:
    with pytest.raises(HRMError) as info:
        MergeReducer("average")
    assert info.value.code == ErrorCode.VALIDATION_FAILED


def test_vote_winner_reaching_the_threshold() -> None:
    assert VotingReducer(threshold=0.6).reduce(votes("yes", "Yes.", "no")) == "yes"


def test_vote_below_threshold_without_tie_uses_the_tiebreaker() -> None:
    reducer = VotingReducer(threshold=0.6, tiebreaker="first")
    assert reducer.reduce(votes("b", "a", "a", "c", "d")) == "a"


@pytest.mark.parametrize("threshold", [0.5, 0.6, 1.0])
def test_vote_tie_with_first_takes_the_earliest_of_the_most_voted(threshold: float) -> None:
    reducer = VotingReducer(threshold=threshold, tiebreaker="first")
    assert reducer.reduce(votes("maybe", "no", "yes", "yes", "no")) == "no"


def test_vote_tie_with_abstain_gives_no_answer() -> None:
    with pytest.raises(HRMError) as info:
        VotingReducer(threshold=0.5, tiebreaker="abstain").reduce(votes("yes", "no"))
    assert info.value.code == ErrorCode.STRATEGY_FAILED
    assert "abstained" in info.value.message


def test_vote_tie_with_escalate_requires_escalation() -> None:
    with pytest.raises(HRMError) as info:
        VotingReducer(threshold=0.5, tiebreaker="escalate").reduce(votes("yes", "no"))
    assert info.value.code == ErrorCode.ESCALATION_REQUIRED


def test_vote_with_no_votes_never_invents_a_winner() -> None:
    for tiebreaker in ("first", "abstain", "escalate"):
        with pytest.raises(HRMError):
            VotingReducer(tiebreaker=tiebreaker).reduce([])


@pytest.mark.parametrize(
    ("threshold", "tiebreaker"), [(0.0, "first"), (1.5, "first"), (0.6, "coin")]
)
def test_bad_vote_settings_are_refused(threshold: float, tiebreaker: str) -> None:
    with pytest.raises(HRMError) as info:
        VotingReducer(threshold=threshold, tiebreaker=tiebreaker)
    assert info.value.code == ErrorCode.VALIDATION_FAILED


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(["yes", "no", "maybe"]), min_size=1, max_size=9),
    st.floats(min_value=0.05, max_value=1.0),
)
def test_vote_first_always_returns_a_most_voted_answer(answers: list[str], threshold: float) -> None:
    result = VotingReducer(threshold=threshold, tiebreaker="first").reduce(votes(*answers))
    top = max(answers.count(a) for a in answers)
    assert answers.count(result) == top
    assert result == next(a for a in answers if answers.count(a) == top)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["yes", "no"]), min_size=1, max_size=9),
       st.floats(min_value=0.05, max_value=1.0))
def test_vote_escalates_exactly_when_no_single_answer_reaches_the_threshold(
    answers: list[str], threshold: float
) -> None:
    counts = sorted((answers.count(a) for a in set(answers)), reverse=True)
    wins = (len(counts) == 1 or counts[0] > counts[1]) and counts[0] / len(answers) >= threshold
    reducer = VotingReducer(threshold=threshold, tiebreaker="escalate")
    if wins:
        assert answers.count(reducer.reduce(votes(*answers))) == counts[0]
    else:
        with pytest.raises(HRMError):
            reducer.reduce(votes(*answers))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=8))
def test_dedupe_keeps_one_answer_per_key_in_first_seen_order(contents: list[str]) -> None:
    merged = MergeReducer("dedupe").reduce([out(f"a{i}", c) for i, c in enumerate(contents)])
    keys = [answer_key(c) for c in merged]
    assert len(keys) == len(set(keys))
    assert set(keys) == {answer_key(c) for c in contents}
    assert keys == list(dict.fromkeys(answer_key(c) for c in contents))


def test_synthesis_calls_the_lead_over_every_delegate_output() -> None:
    llm = ScriptedAdapter(["The combined answer."])
    reducer = SynthesisReducer("planner", llm, system_prompt="You plan.", task="Ship it")
    result = reducer.reduce([out("researcher", "facts"), out("critic", "risks")])
    assert result == "The combined answer."
    call = llm.calls[0]
    assert call.system == "You plan."
    text = call.messages[0].content
    assert "Task: Ship it" in text
    read = read_task_message(text)
    assert read is not None and read.task == "Ship it"
    assert "Output 1, from researcher:\nfacts" in text and "Output 2, from critic:\nrisks" in text
    assert read.material == ("facts", "risks")
    llm.assert_done()


def test_synthesis_without_delegate_output_fails_without_calling_the_lead() -> None:
    llm = ScriptedAdapter()
    with pytest.raises(HRMError) as info:
        SynthesisReducer("planner", llm).reduce([])
    assert info.value.code == ErrorCode.STRATEGY_FAILED
    llm.assert_done()


def test_reducer_for_builds_each_reducer_from_the_proposal() -> None:
    assert isinstance(reducer_for(proposal(["a"], ReducerType.PASS_THROUGH), None),
                      PassThroughReducer)
    merge = reducer_for(proposal(["a"], ReducerType.MERGE, strategy="dedupe"), None)
    assert isinstance(merge, MergeReducer) and merge.strategy == "dedupe"
    vote = reducer_for(
        proposal(["a"], ReducerType.VOTE, threshold=0.75, tiebreaker="abstain"), None
    )
    assert isinstance(vote, VotingReducer) and (vote.threshold, vote.tiebreaker) == (
        0.75, "abstain",
    )
    synth = reducer_for(proposal(["lead", "b"], ReducerType.SYNTHESIZE), ScriptedAdapter())
    assert isinstance(synth, SynthesisReducer) and synth.lead_agent == "lead"


def test_reducer_for_synthesize_needs_a_model() -> None:
    with pytest.raises(HRMError) as info:
        reducer_for(proposal(["lead"], ReducerType.SYNTHESIZE, lead="lead"), None)
    assert info.value.code == ErrorCode.VALIDATION_FAILED
