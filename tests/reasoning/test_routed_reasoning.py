"""The router follows the routing table in every stance (issue 33 item 1, D263): a plan for
multi-step work, agents with the table's reducer for perspectives, stakes and conflicts, a
direct answer for a simple question; a learned pattern still outranks the table."""

from __future__ import annotations

from typing import Any

import pytest

from hrm.reasoning import ReasoningRouter
from hrm.reasoning.types import PatternMatch
from hrm.types import ReducerType, Stance

MULTI = "Set up CI for this repo, then document it."
STAKES = "Design a distributed multi-region billing architecture."
PERSPECTIVES = "What are the pros and cons of Postgres vs MySQL?"
CONFLICT = "Team A says Kafka, team B RabbitMQ; they disagree."
SIMPLE = "How do I delete a local git branch?"


@pytest.mark.parametrize("stance", list(Stance))
@pytest.mark.parametrize(
    ("text", "primary", "reducer"),
    [
        (MULTI, "execute_plan", None),
        (STAKES, "delegate_agents", "any"),
        (PERSPECTIVES, "delegate_agents", "any"),
        (CONFLICT, "delegate_agents", "any"),
        (SIMPLE, "respond_direct", None),
    ],
)
def test_the_table_decides_in_every_stance(
    make_input: Any, stance: Stance, text: str, primary: str, reducer: str | None
) -> None:
    result = ReasoningRouter().reason(make_input(text, stance=stance), stance=stance)
    assert result.selected.primary.id == primary
    assert result.route is not None and result.route.candidate_id == primary
    assert "routing table" in result.strategy.reason
    assert "routing table" in result.selected.rationale
    assert result.selected.fallback is not None
    assert result.selected.fallback.action_type != result.selected.primary.action_type
    if reducer is not None:
        assert result.proposal is not None
        assert result.proposal.reducer == result.route.reducer


def test_high_stakes_vote_with_at_least_two_agents(make_input: Any) -> None:
    result = ReasoningRouter().reason(make_input(STAKES), stance=Stance.EXECUTION)
    assert result.proposal is not None
    assert result.proposal.reducer is ReducerType.VOTE
    assert len(result.proposal.agents) >= 2


def test_a_vague_simple_request_is_asked_about(make_input: Any) -> None:
    result = ReasoningRouter().reason(make_input("Maybe something? Not sure which, unclear"))
    assert result.selected.primary.action_type == "ask"


def test_a_learned_pattern_outranks_the_table(make_input: Any) -> None:
    def source(_signature: dict[str, Any]) -> list[PatternMatch]:
        return [PatternMatch("pat_quick", 0.95, "quick_answer", 9)]

    result = ReasoningRouter(pattern_source=source).reason(make_input(MULTI))
    assert result.route is None
    assert result.routing.pattern_match == "pat_quick"
    assert result.selected.primary.id == "respond_direct"


def test_without_agents_the_table_s_pick_is_scored_and_said(make_input: Any) -> None:
    result = ReasoningRouter(known_agents=[]).reason(make_input(CONFLICT))
    assert result.route is None
    assert result.selected.primary.id != "delegate_agents"
    assert any("no delegate_agents candidate" in note for note in result.notes)


def test_the_second_opinion_is_asked_and_its_class_routes(make_input: Any) -> None:
    asked: list[str] = []

    def opinion(text: str, reading: Any) -> Any:
        asked.append(text)
        reading.request_class = "multi_step"
        reading.second_opinion = "multi_step"
        return reading

    result = ReasoningRouter(second_opinion=opinion).reason(make_input(SIMPLE))
    assert asked == [SIMPLE]
    assert result.selected.primary.id == "execute_plan"
