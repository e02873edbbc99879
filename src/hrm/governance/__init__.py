"""Governance (001 §12): policy, signals, arbitration, problems, preferences, the kernel.

Names are imported on first use, so importing this package costs nothing (the Claude
Code hook imports through it and must start fast).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CITATION_PATTERNS",
    "DEADLINE_MARKERS",
    "EMERGENCY_MARKERS",
    "EMERGENCY_PRIORITY",
    "HEDGE_MARKERS",
    "MAX_KEYWORDS",
    "POLICY",
    "RECENT_REFERENCE_DAYS",
    "SIMILARITY_THRESHOLD",
    "STALENESS_HORIZON_SECONDS",
    "URGENCY_MARKERS",
    "ArbitrationDecision",
    "ArbitrationDisposition",
    "CanonSource",
    "Claim",
    "CommitmentView",
    "Contradiction",
    "DerivedSignals",
    "FocusState",
    "GovernanceKernel",
    "PolicySurface",
    "PreemptScoreArbiter",
    "PreferenceClass",
    "PreferenceClassification",
    "PreferenceClassifier",
    "PreferencePolicy",
    "Problem",
    "ProblemMatch",
    "ProblemRegistry",
    "ProblemStatus",
    "SignalEngine",
    "count_citations",
    "current_policy",
    "dated_references",
    "deadline_markers_in",
    "emergency_markers_in",
    "extract_claims",
    "extract_keywords",
    "find_contradictions",
    "keyword_similarity",
    "new_problem_id",
    "override_policy",
    "preempt_score",
    "urgency_markers_in",
]

_LAZY = {
    "ArbitrationDecision": "hrm.governance.arbiter",
    "ArbitrationDisposition": "hrm.governance.arbiter",
    "CITATION_PATTERNS": "hrm.governance.policy",
    "CanonSource": "hrm.governance.signals",
    "Claim": "hrm.governance.signals",
    "CommitmentView": "hrm.governance.arbiter",
    "Contradiction": "hrm.governance.signals",
    "DEADLINE_MARKERS": "hrm.governance.policy",
    "DerivedSignals": "hrm.governance.signals",
    "EMERGENCY_MARKERS": "hrm.governance.policy",
    "EMERGENCY_PRIORITY": "hrm.governance.policy",
    "FocusState": "hrm.governance.arbiter",
    "GovernanceKernel": "hrm.governance.kernel",
    "HEDGE_MARKERS": "hrm.governance.policy",
    "MAX_KEYWORDS": "hrm.governance.problems",
    "POLICY": "hrm.governance.policy",
    "PolicySurface": "hrm.governance.policy",
    "PreemptScoreArbiter": "hrm.governance.arbiter",
    "PreferenceClass": "hrm.governance.preferences",
    "PreferenceClassification": "hrm.governance.preferences",
    "PreferenceClassifier": "hrm.governance.preferences",
    "PreferencePolicy": "hrm.governance.preferences",
    "Problem": "hrm.governance.problems",
    "ProblemMatch": "hrm.governance.problems",
    "ProblemRegistry": "hrm.governance.problems",
    "ProblemStatus": "hrm.governance.problems",
    "RECENT_REFERENCE_DAYS": "hrm.governance.policy",
    "SIMILARITY_THRESHOLD": "hrm.governance.problems",
    "STALENESS_HORIZON_SECONDS": "hrm.governance.policy",
    "SignalEngine": "hrm.governance.signals",
    "URGENCY_MARKERS": "hrm.governance.policy",
    "count_citations": "hrm.governance.signals",
    "current_policy": "hrm.governance.policy",
    "dated_references": "hrm.governance.signals",
    "deadline_markers_in": "hrm.governance.signals",
    "emergency_markers_in": "hrm.governance.signals",
    "extract_claims": "hrm.governance.signals",
    "extract_keywords": "hrm.governance.problems",
    "find_contradictions": "hrm.governance.signals",
    "keyword_similarity": "hrm.governance.problems",
    "new_problem_id": "hrm.governance.problems",
    "override_policy": "hrm.governance.policy",
    "preempt_score": "hrm.governance.arbiter",
    "urgency_markers_in": "hrm.governance.signals",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hrm.governance' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
