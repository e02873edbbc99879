"""The EscalationManager (001 §3.4): when to spend more effort, and when a pattern says less.

Escalation score, in [0, 1] (`escalation_score`), weights summing to 1.0:

=============  ======  =====================================================
dimension      weight  value
=============  ======  =====================================================
complexity     0.30    SIMPLE 0, MODERATE 0.5, COMPLEX 1
uncertainty    0.25    the classification's uncertainty
conflict       0.20    NONE 0, LOW 1/3, MEDIUM 2/3, HIGH 1
stakes         0.25    LOW 0, MEDIUM 0.5, HIGH 1
=============  ======  =====================================================

Escalate when the score reaches the threshold (0.6, 001 §3.4) or the classification's own
`should_escalate` fires, and the strategy is not already the most effortful. Escalation moves
one step right in `STRATEGIES`; de-escalation one step left, when a strong pattern
(confidence >= `STRONG_PATTERN_CONFIDENCE`, 0.85) supports a cheaper strategy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hrm.reasoning.strategy import with_strategy
from hrm.reasoning.types import STRATEGIES
from hrm.types import Complexity, ConflictLevel, Stakes

if TYPE_CHECKING:
    from hrm.reasoning.types import InputClassification, StrategySelection

__all__ = ["ESCALATION_WEIGHTS", "STRONG_PATTERN_CONFIDENCE", "EscalationManager"]

STRONG_PATTERN_CONFIDENCE = 0.85
"""A pattern at least this confident may pull the strategy one step cheaper."""

ESCALATION_WEIGHTS = {"complexity": 0.30, "uncertainty": 0.25, "conflict": 0.20, "stakes": 0.25}
"""How much each dimension contributes to the escalation score (sums to 1.0)."""

_COMPLEXITY = {Complexity.SIMPLE: 0.0, Complexity.MODERATE: 0.5, Complexity.COMPLEX: 1.0}
_CONFLICT = {
    ConflictLevel.NONE: 0.0,
    ConflictLevel.LOW: 1 / 3,
    ConflictLevel.MEDIUM: 2 / 3,
    ConflictLevel.HIGH: 1.0,
}
_STAKES = {Stakes.LOW: 0.0, Stakes.MEDIUM: 0.5, Stakes.HIGH: 1.0}


class EscalationSettings(Protocol):
    """What the manager reads from configuration (`hrm.config.HRMConfig` satisfies it)."""

    @property
    def escalation_threshold(self) -> float: ...


class EscalationManager:
    """Decides escalation and de-escalation between strategies. Stateless."""

    ESCALATION_THRESHOLD: float = 0.6
    """001 §3.4 default ("per user decision")."""

    def __init__(self, threshold: float = ESCALATION_THRESHOLD) -> None:
        self.threshold = threshold

    @classmethod
    def from_config(cls, config: EscalationSettings) -> EscalationManager:
        """A manager using ``config.escalation_threshold``."""
        return cls(threshold=config.escalation_threshold)

    def escalation_score(self, classification: InputClassification) -> float:
        """How strongly the input's dimensions call for more effort, in [0, 1]."""
        uncertainty = min(1.0, max(0.0, float(classification.uncertainty)))
        score = (
            ESCALATION_WEIGHTS["complexity"] * _COMPLEXITY[classification.complexity]
            + ESCALATION_WEIGHTS["uncertainty"] * uncertainty
            + ESCALATION_WEIGHTS["conflict"] * _CONFLICT[classification.conflict]
            + ESCALATION_WEIGHTS["stakes"] * _STAKES[classification.stakes]
        )
        return round(min(1.0, max(0.0, score)), 4)

    def should_escalate(
        self, classification: InputClassification, strategy: StrategySelection
    ) -> bool:
        """True when the input needs more effort than ``strategy`` and more is available."""
        if _index(strategy.strategy) >= len(STRATEGIES) - 1:
            return False
        return (
            self.escalation_score(classification) >= self.threshold
            or classification.should_escalate()
        )

    def escalate(
        self,
        strategy: StrategySelection,
        classification: InputClassification | None = None,
    ) -> StrategySelection:
        """The next more effortful strategy, ``escalation_level`` + 1 (unchanged at the top)."""
        position = _index(strategy.strategy)
        if position >= len(STRATEGIES) - 1:
            return strategy
        target = STRATEGIES[position + 1]
        return with_strategy(
            strategy,
            target,
            reason=f"escalated from {strategy.strategy}: {strategy.reason}",
            classification=classification,
            escalation_level=strategy.escalation_level + 1,
        )

    def should_deescalate(self, strategy: StrategySelection, pattern_confidence: float) -> bool:
        """True when a strong pattern (>= 0.85) backs a cheaper strategy and one exists."""
        return _index(strategy.strategy) > 0 and pattern_confidence >= STRONG_PATTERN_CONFIDENCE

    def deescalate(
        self,
        strategy: StrategySelection,
        classification: InputClassification | None = None,
    ) -> StrategySelection:
        """The next cheaper strategy, ``escalation_level`` - 1 (never below 0)."""
        position = _index(strategy.strategy)
        if position <= 0:
            return strategy
        target = STRATEGIES[position - 1]
        return with_strategy(
            strategy,
            target,
            reason=f"de-escalated from {strategy.strategy}: {strategy.reason}",
            classification=classification,
            escalation_level=max(0, strategy.escalation_level - 1),
        )


def _index(strategy: str) -> int:
    """Position in STRATEGIES; an unknown strategy counts as the cheapest."""
    return STRATEGIES.index(strategy) if strategy in STRATEGIES else 0
