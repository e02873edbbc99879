"""Reasoning (001 §3): from an input to exactly one action with a fallback.

`InputClassifier` reads every dimension of an input; `StrategySelector` picks a strategy from
learned patterns or rules; `EscalationManager` moves it up or down; `ActionSelector` picks the
next best action; `ReasoningRouter` runs the two phases. The data types live in
`hrm.reasoning.types` and are re-exported here.
"""

from hrm.reasoning.actions import ActionSelector
from hrm.reasoning.classifier import InputClassifier
from hrm.reasoning.escalation import EscalationManager
from hrm.reasoning.router import ReasoningResult, ReasoningRouter
from hrm.reasoning.strategy import StrategySelector
from hrm.reasoning.types import (
    STRATEGIES,
    AgentBundleProposal,
    CandidateAction,
    InputClassification,
    PatternMatch,
    PrioritySignals,
    RoutingDecision,
    SelectedAction,
    StrategySelection,
)

__all__ = [
    "STRATEGIES",
    "ActionSelector",
    "AgentBundleProposal",
    "CandidateAction",
    "EscalationManager",
    "InputClassification",
    "InputClassifier",
    "PatternMatch",
    "PrioritySignals",
    "ReasoningResult",
    "ReasoningRouter",
    "RoutingDecision",
    "SelectedAction",
    "StrategySelection",
    "StrategySelector",
]
