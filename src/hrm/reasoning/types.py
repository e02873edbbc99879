"""Reasoning's data types (001 §3): what Reasoning produces and Focus, the runtime and
Learning read.

They live apart from the components so Focus (approval) and the runtime can import them without
importing Reasoning's logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes

__all__ = [
    "STRATEGIES",
    "AgentBundleProposal",
    "CandidateAction",
    "InputClassification",
    "PatternMatch",
    "PrioritySignals",
    "RoutingDecision",
    "SelectedAction",
    "StrategySelection",
]

STRATEGIES = ("quick_answer", "dialogue", "exploration", "decomposition", "verification")
"""Reasoning strategies, from least to most effortful (escalation moves right)."""

ACTION_TYPES = ("respond", "execute", "delegate", "ask", "wait")


@dataclass
class InputClassification:
    """An input analysed across every dimension (001 §3.2)."""

    complexity: Complexity
    uncertainty: float
    conflict: ConflictLevel
    stakes: Stakes
    horizon: str
    """immediate | near | far"""
    domain: list[str]
    confidence: float
    irreversible: bool = False
    """The input asks for something that cannot be undone (used by the voting rule)."""
    signals: list[str] = field(default_factory=list)
    """Which deterministic markers fired (for the decision record)."""

    def should_escalate(self) -> bool:
        """True if any dimension indicates escalation is needed."""
        return (
            self.complexity == Complexity.COMPLEX
            or self.uncertainty > 0.7
            or self.conflict != ConflictLevel.NONE
            or self.stakes == Stakes.HIGH
        )

    def signature(self) -> dict[str, Any]:
        """The input signature Learning matches patterns on."""
        return {
            "complexity": self.complexity.value,
            "stakes": self.stakes.value,
            "horizon": self.horizon,
            "domain": sorted(self.domain),
        }


@dataclass
class PatternMatch:
    """A learned pattern matching an input (001 §3.1)."""

    pattern_id: str
    match_confidence: float
    recommended_strategy: str
    evidence_count: int


@dataclass
class RoutingDecision:
    """How an input is handled (001 §3.1)."""

    strategy: str
    confidence: float
    requires_agents: bool
    pattern_match: str | None
    escalation_level: int


@dataclass
class StrategySelection:
    """The chosen strategy (001 §3.3)."""

    strategy: str
    confidence: float
    reason: str
    requires_agents: bool
    suggested_reducer: ReducerType | None
    fallback_strategy: str | None
    escalation_level: int = 0
    pattern_id: str | None = None


@dataclass
class AgentBundleProposal:
    """What Reasoning asks Focus to approve when agents are needed (001 §3.5, 000 §3.5).

    ``reducer_config`` by reducer: PASS_THROUGH ``{}``; MERGE ``{"strategy": "concatenate" |
    "dedupe" | "select_best", "timeout_ms": int}``; VOTE ``{"threshold": 0.6, "tiebreaker":
    "first" | "abstain" | "escalate"}``; SYNTHESIZE ``{"lead": id, "delegates": [...],
    "max_depth": 2}``.
    """

    strategy: str
    classification: InputClassification
    agents: list[str]
    reducer: ReducerType
    parallel: bool = True
    reducer_config: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    confidence: float = 0.5
    fallback: str | None = None


@dataclass
class CandidateAction:
    """A potential action (001 §3.6)."""

    id: str
    action_type: str
    """respond | execute | delegate | ask | wait"""
    description: str
    urgency: float = 0.0
    dependency_score: float = 0.0
    momentum_score: float = 0.0
    energy_cost: float = 0.5
    alignment_score: float = 1.0
    agent_proposal: AgentBundleProposal | None = None
    source: str = "reasoning"
    atomic: bool = False
    """Completes in one step with no side effects beyond its own (micro-batch eligible)."""
    coupled_with: list[str] = field(default_factory=list)
    """Ids of candidates this one must run together with (micro-batch eligible)."""


@dataclass
class SelectedAction:
    """The single action Reasoning hands to Focus (001 §3.6)."""

    primary: CandidateAction
    rationale: str
    priority_score: float
    fallback: CandidateAction | None
    batch: list[CandidateAction] | None = None
    use_voting: bool = False

    def is_batch(self) -> bool:
        """True if this is a micro-batch, not a single action."""
        return self.batch is not None and len(self.batch) > 1


DEFAULT_PRIORITY_WEIGHTS: dict[str, float] = {
    "urgency": 0.2,
    "dependency": 0.2,
    "momentum": 0.25,
    "energy_cost": 0.15,
    "alignment": 0.2,
}


@dataclass
class PrioritySignals:
    """Signals that rank candidate actions (001 §3.6)."""

    urgency: float = 0.0
    dependency: float = 0.0
    momentum: float = 0.0
    energy_cost: float = 0.5
    alignment: float = 1.0

    def compute_score(self, weights: dict[str, float] | None = None) -> float:
        """Weighted priority in [0, 1]; energy cost is inverted (cheap scores high)."""
        w = weights or DEFAULT_PRIORITY_WEIGHTS
        score = (
            w["urgency"] * _unit(self.urgency)
            + w["dependency"] * _unit(self.dependency)
            + w["momentum"] * _unit(self.momentum)
            + w["energy_cost"] * (1 - _unit(self.energy_cost))
            + w["alignment"] * _unit(self.alignment)
        )
        return max(0.0, min(1.0, score))

    @classmethod
    def of(cls, candidate: CandidateAction) -> PrioritySignals:
        return cls(
            urgency=candidate.urgency,
            dependency=candidate.dependency_score,
            momentum=candidate.momentum_score,
            energy_cost=candidate.energy_cost,
            alignment=candidate.alignment_score,
        )


def _unit(x: float) -> float:
    return max(0.0, min(1.0, float(x)))
