"""Routing that uses the system, through the facade (issue 33 item 1): a multi-step request
runs a plan from an ordinary turn under a commitment; a high-stakes request runs agents late
in a session; a simple question is answered directly; the stance's path through discovery,
execution and evaluation is reached in conversation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hrm.cli.why import explain
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.types import Stance

CHATTER = [
    "What's the capital of Australia?",
    "How do I reverse a string in Python?",
    "Define idempotent.",
    "What does git rebase do?",
    "Why is the sky blue?",
    "How long should I boil an egg?",
    "What's 15% of 80?",
    "Tell me a joke about databases.",
    "What's the plural of cactus?",
    "Convert 5 miles to kilometres.",
]


@pytest.fixture
def hrm(home: HRMHome) -> Iterator[HRM]:
    h = HRM.open(home, "ADMIN", "offline")
    yield h
    h.close()


def test_a_multi_step_request_runs_a_plan_under_a_commitment(hrm: HRM) -> None:
    result = hrm.turn("Set up CI for this repo, then document it.")
    decision = result.decision
    assert result.action == "execute"
    assert decision.strategy["route"]["action"] == "execute_plan"
    assert decision.strategy["request"]["class"] == "multi_step"
    steps = decision.execution["plan"]["steps"]
    assert len(steps) > 1
    assert decision.execution["plan_status"] in ("converged", "ttl_expired", "failed")
    assert "Plan (" in result.response and "steps done" in result.response
    assert any("commitment created" in note for note in decision.notes)
    assert decision.stance_before == Stance.SENSEMAKING.value
    assert decision.commitment_after is not None or decision.stance_after == "evaluation"
    why = hrm.last_decision()
    assert why is not None and "routing table" in why["strategy"]["reason"]
    rows = dict(explain(why))  # what /why and `hrm why` show
    assert rows["request"].startswith("multi_step")
    assert rows["plan"].endswith(f"/{len(steps)} steps done")
    assert "routing table: multi_step" in rows["strategy"]


def test_a_high_stakes_request_runs_agents_at_turn_ten_and_later(hrm: HRM) -> None:
    for text in CHATTER:
        assert hrm.turn(text).action == "respond"
    assert hrm.turn_number >= 10
    result = hrm.turn("Design a distributed multi-region billing architecture.")
    assert result.action == "delegate"
    assert result.decision.strategy["request"]["class"] == "high_stakes"
    assert result.decision.execution["agents"]
    assert result.decision.strategy["route"]["reducer"] in ("vote", "synthesize")


def test_a_simple_question_is_answered_directly(hrm: HRM) -> None:
    result = hrm.turn("How do I delete a local git branch?")
    assert result.action == "respond"
    assert result.decision.strategy["route"]["action"] == "respond_direct"


def test_the_stance_path_through_discovery_execution_and_evaluation(hrm: HRM) -> None:
    assert hrm.stance is Stance.SENSEMAKING
    perspectives = hrm.turn("What are the pros and cons of Kafka vs RabbitMQ for our events?")
    assert perspectives.action == "delegate"
    assert perspectives.decision.strategy["route"]["enter"] == "discovery"
    assert hrm.stance is Stance.DISCOVERY
    plan = hrm.turn("Write the events migration plan and the scripts, then document them.")
    assert plan.action == "execute"
    assert plan.decision.stance_before == "discovery"
    assert plan.decision.execution["plan_status"] == "converged"
    assert hrm.stance is Stance.EVALUATION  # the plan delivered: its work is evaluated
    assert plan.decision.commitment_after is None  # delivered work completes the commitment


def test_a_commitment_the_person_made_is_not_replaced(hrm: HRM) -> None:
    hrm.turn("Let's work on the release checklist.")
    hrm.turn("Let's focus on the release checklist for the next 4 turns.")
    held = hrm.focus.commitments.get_active()
    assert held is not None
    result = hrm.turn("Write the release checklist and the announcement email, then send it.")
    assert result.action == "execute"
    still = hrm.focus.commitments.get_active()
    assert still is not None and still.id == held.id
