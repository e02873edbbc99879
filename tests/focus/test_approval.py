"""AgentApprovalGate: rules 1-4 in order, the first failure is the reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from hrm.config import PolicySurface
from hrm.focus.approval import AgentApprovalGate
from hrm.reasoning.types import AgentBundleProposal, InputClassification
from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes, Stance

POLICY = PolicySurface()
KNOWN = {"researcher", "critic", "coder", "writer"}


@dataclass
class Lease:
    id: str = "cmt_1"
    problem_id: str = "prob_1"
    description: str = "Fix the login bug in the auth service"
    turns_remaining: int = 3
    turns_total: int = 5
    status: str = "active"


def proposal(
    *,
    strategy: str = "exploration",
    agents: list[str] | None = None,
    reducer: ReducerType = ReducerType.MERGE,
    parallel: bool = True,
    domain: list[str] | None = None,
    merge: str | None = None,
    **config: Any,
) -> AgentBundleProposal:
    if merge is not None:
        config["strategy"] = merge
    return AgentBundleProposal(
        strategy=strategy,
        classification=InputClassification(
            complexity=Complexity.MODERATE, uncertainty=0.4, conflict=ConflictLevel.NONE,
            stakes=Stakes.MEDIUM, horizon="near", domain=domain or ["auth"], confidence=0.7,
        ),
        agents=agents if agents is not None else ["researcher", "critic"],
        reducer=reducer,
        parallel=parallel,
        reducer_config=dict(config),
        reason="look at the login flow",
    )  # fmt: skip


@pytest.fixture
def gate() -> AgentApprovalGate:
    return AgentApprovalGate(POLICY, KNOWN, max_agents=3)


def test_approves_a_valid_bundle(gate: AgentApprovalGate) -> None:
    decision = gate.evaluate(proposal(), Stance.SENSEMAKING, None)
    assert decision.approved and decision.metadata["agents"] == ["researcher", "critic"]


@pytest.mark.parametrize(
    ("stance", "kwargs", "allowed"),
    [
        (Stance.SENSEMAKING, {"strategy": "verification"}, True),
        (Stance.SENSEMAKING, {"strategy": "decomposition"}, False),
        (Stance.DISCOVERY, {"strategy": "decomposition"}, True),
        (Stance.DISCOVERY, {"strategy": "verification"}, False),
        (Stance.EXECUTION, {"strategy": "quick_answer"}, True),
        (Stance.EVALUATION, {"strategy": "dialogue", "reducer": ReducerType.VOTE}, True),
        (Stance.EVALUATION, {"strategy": "exploration"}, False),
    ],
)
def test_stance_allows_mapping(
    gate: AgentApprovalGate, stance: Stance, kwargs: dict[str, Any], allowed: bool
) -> None:
    assert gate.stance_allows(proposal(**kwargs), stance) is allowed


def test_first_failing_rule_is_the_reason(gate: AgentApprovalGate) -> None:
    # wrong stance AND unknown agent: the stance rule (1) is reported
    bad = proposal(strategy="decomposition", agents=["ghost"])
    decision = gate.evaluate(bad, Stance.SENSEMAKING, None)
    assert not decision.approved and decision.metadata["rule"] == "stance"


def test_commitment_alignment(gate: AgentApprovalGate) -> None:
    lease = Lease()
    assert gate.evaluate(proposal(domain=["login"]), Stance.EXECUTION, lease).approved
    off_topic = proposal(domain=["gardening"])
    off_topic.reason = "plan the vegetable beds"
    decision = gate.evaluate(off_topic, Stance.EXECUTION, lease)
    assert not decision.approved and decision.metadata["rule"] == "commitment"
    claimed = proposal(domain=["gardening"], problem_id="prob_1")
    assert gate.evaluate(claimed, Stance.EXECUTION, lease).approved
    wrong = proposal(domain=["login"], problem_id="prob_9")
    assert gate.evaluate(wrong, Stance.EXECUTION, lease).metadata["rule"] == "commitment"
    assert gate.evaluate(off_topic, Stance.EXECUTION, Lease(status="expired")).approved


@pytest.mark.parametrize(
    "agents",
    [[], ["researcher", "researcher"], ["researcher", "ghost"], ["researcher", "critic", "coder",
                                                                "writer"]],
)  # fmt: skip
def test_authorization_failures(gate: AgentApprovalGate, agents: list[str]) -> None:
    decision = gate.evaluate(proposal(agents=agents), Stance.EXECUTION, None)
    assert not decision.approved and decision.metadata["rule"] == "authorization"


def test_registry_may_be_a_predicate() -> None:
    gate = AgentApprovalGate(POLICY, lambda agent: agent.startswith("ok_"))
    assert gate.evaluate(proposal(agents=["ok_a"]), Stance.EXECUTION, None).approved
    assert not gate.evaluate(proposal(agents=["no_a"]), Stance.EXECUTION, None).approved
    assert gate.max_agents == POLICY.MAX_CONCURRENT_AGENTS


@pytest.mark.parametrize(
    ("kwargs", "approved"),
    [
        ({"reducer": ReducerType.VOTE}, True),
        ({"reducer": ReducerType.VOTE, "agents": ["critic"]}, False),
        ({"reducer": ReducerType.VOTE, "threshold": 0}, False),
        ({"reducer": ReducerType.VOTE, "threshold": 1.0, "tiebreaker": "escalate"}, True),
        ({"reducer": ReducerType.VOTE, "tiebreaker": "coin"}, False),
        ({"reducer": ReducerType.VOTE, "threshold": True}, False),
        ({"reducer": ReducerType.SYNTHESIZE, "lead": "writer"}, True),
        ({"reducer": ReducerType.SYNTHESIZE}, False),
        ({"reducer": ReducerType.SYNTHESIZE, "lead": "ghost"}, False),
        ({"reducer": ReducerType.SYNTHESIZE, "lead": "critic", "max_depth": 0}, False),
        ({"reducer": ReducerType.MERGE, "merge": "select_best"}, True),
        ({"reducer": ReducerType.MERGE, "merge": "shuffle"}, False),
        ({"reducer": ReducerType.PASS_THROUGH, "parallel": False}, True),
        ({"reducer": ReducerType.PASS_THROUGH}, False),
    ],
)
def test_reducer_compatibility(
    gate: AgentApprovalGate, kwargs: dict[str, Any], approved: bool
) -> None:
    decision = gate.evaluate(proposal(**kwargs), Stance.EXECUTION, None)
    assert decision.approved is approved, decision.reason
    if not approved:
        assert decision.metadata["rule"] == "reducer"
