"""Focus (001 §4): stance, gates, commitments, agent approval, and the turn's arbitration."""

from hrm.focus.approval import AgentApprovalGate
from hrm.focus.commitments import Commitment, CommitmentManager
from hrm.focus.focus import FocusChange, FocusHRM, FocusResult, GovernanceOutcome
from hrm.focus.gates import GateController, GateDecision, GateEvaluator
from hrm.focus.stance import (
    ACTION_RULES,
    GATE_TRANSITIONS,
    StanceMachine,
    StanceProposal,
    StanceState,
    StanceTransition,
)

__all__ = [
    "ACTION_RULES",
    "GATE_TRANSITIONS",
    "AgentApprovalGate",
    "Commitment",
    "CommitmentManager",
    "FocusChange",
    "FocusHRM",
    "FocusResult",
    "GateController",
    "GateDecision",
    "GateEvaluator",
    "GovernanceOutcome",
    "StanceMachine",
    "StanceProposal",
    "StanceState",
    "StanceTransition",
]
