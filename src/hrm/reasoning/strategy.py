"""The StrategySelector (001 §3.3): how much effort an input deserves.

A learned pattern whose match confidence reaches ``pattern_match_threshold`` wins outright
(Learning's evidence beats rules). Otherwise the rules, first that fires:

1. stakes HIGH -> verification (check before acting)
2. complexity COMPLEX -> decomposition
3. uncertainty > 0.7 on a SIMPLE input -> dialogue (ask what is meant)
4. uncertainty > 0.5, or any conflict -> exploration (look at the options)
5. otherwise quick_answer (confidence 0.8 for SIMPLE with uncertainty <= 0.3, else 0.6)

Agents (`STRATEGY_REQUIRES_AGENTS`) at exploration and above; reducers (`reducer_for`):
exploration MERGE, verification VOTE, decomposition PASS_THROUGH (a pipeline) or SYNTHESIZE
when the input spans two or more domains (a lead integrates different specialists).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from hrm.reasoning.types import StrategySelection
from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes

if TYPE_CHECKING:
    from hrm.reasoning.types import InputClassification, PatternMatch

__all__ = [
    "STRATEGY_REQUIRES_AGENTS",
    "ReasoningSettings",
    "StrategySelector",
    "fallback_for",
    "reducer_for",
    "with_strategy",
]

STRATEGY_REQUIRES_AGENTS: dict[str, bool] = {
    "quick_answer": False,
    "dialogue": False,
    "exploration": True,
    "decomposition": True,
    "verification": True,
}
"""Whether a strategy is carried out by an agent bundle."""


class ReasoningSettings(Protocol):
    """What the selector reads from configuration (`hrm.config.HRMConfig` satisfies it)."""

    @property
    def pattern_match_threshold(self) -> float: ...


def reducer_for(
    strategy: str, classification: InputClassification | None = None
) -> ReducerType | None:
    """The MapReduce reducer a strategy's agent bundle uses (None without agents)."""
    if strategy == "exploration":
        return ReducerType.MERGE
    if strategy == "verification":
        return ReducerType.VOTE
    if strategy == "decomposition":
        domains = [d for d in classification.domain if d != "general"] if classification else []
        return ReducerType.SYNTHESIZE if len(domains) >= 2 else ReducerType.PASS_THROUGH
    return None


def fallback_for(strategy: str) -> str:
    """The strategy to fall back to when this one is denied: answer directly, or ask."""
    return "dialogue" if strategy == "quick_answer" else "quick_answer"


def with_strategy(
    selection: StrategySelection,
    strategy: str,
    *,
    reason: str,
    classification: InputClassification | None = None,
    escalation_level: int | None = None,
) -> StrategySelection:
    """A copy of ``selection`` moved to ``strategy`` with agents, reducer and fallback to match."""
    return replace(
        selection,
        strategy=strategy,
        reason=reason,
        requires_agents=STRATEGY_REQUIRES_AGENTS[strategy],
        suggested_reducer=reducer_for(strategy, classification),
        fallback_strategy=fallback_for(strategy),
        escalation_level=(
            selection.escalation_level if escalation_level is None else escalation_level
        ),
    )


class StrategySelector:
    """Chooses a strategy from learned patterns, else from the classification's rules."""

    def __init__(self, pattern_match_threshold: float = 0.7) -> None:
        self.pattern_match_threshold = pattern_match_threshold

    @classmethod
    def from_config(cls, config: ReasoningSettings) -> StrategySelector:
        """A selector using ``config.pattern_match_threshold``."""
        return cls(pattern_match_threshold=config.pattern_match_threshold)

    def select(
        self, classification: InputClassification, pattern_matches: list[PatternMatch]
    ) -> StrategySelection:
        """The strategy for this input (see the module docstring for the order of rules)."""
        usable = [
            match
            for match in pattern_matches
            if match.recommended_strategy in STRATEGY_REQUIRES_AGENTS
            and match.match_confidence >= self.pattern_match_threshold
        ]
        if usable:
            best = max(usable, key=lambda m: (m.match_confidence, m.evidence_count))
            base = _selection(best.recommended_strategy, best.match_confidence, classification)
            return with_strategy(
                replace(base, pattern_id=best.pattern_id),
                best.recommended_strategy,
                reason=(
                    f"pattern {best.pattern_id} matched at {best.match_confidence:.2f} "
                    f"with {best.evidence_count} evidence"
                ),
                classification=classification,
            )
        strategy, confidence, reason = _rule(classification)
        return with_strategy(
            _selection(strategy, confidence, classification),
            strategy,
            reason=reason,
            classification=classification,
        )


def _selection(
    strategy: str, confidence: float, classification: InputClassification
) -> StrategySelection:
    return StrategySelection(
        strategy=strategy,
        confidence=round(min(1.0, max(0.0, confidence)), 4),
        reason="",
        requires_agents=STRATEGY_REQUIRES_AGENTS[strategy],
        suggested_reducer=reducer_for(strategy, classification),
        fallback_strategy=fallback_for(strategy),
    )


def _rule(c: InputClassification) -> tuple[str, float, str]:
    if c.stakes == Stakes.HIGH:
        return "verification", 0.75, "high stakes: verify before acting"
    if c.complexity == Complexity.COMPLEX:
        return "decomposition", 0.7, "complex input: break it into steps"
    if c.uncertainty > 0.7 and c.complexity == Complexity.SIMPLE:
        return "dialogue", 0.65, f"uncertainty {c.uncertainty:.2f}: ask what is meant"
    if c.uncertainty > 0.5 or c.conflict != ConflictLevel.NONE:
        return "exploration", 0.6, (
            f"uncertainty {c.uncertainty:.2f}, conflict {c.conflict.value}: explore options"
        )
    if c.complexity == Complexity.SIMPLE and c.uncertainty <= 0.3:
        return "quick_answer", 0.8, "simple and clear: answer directly"
    return "quick_answer", 0.6, f"{c.complexity.value} and fairly clear: answer directly"

