"""Learning (001 §5): patterns with evidence, the feedback loop that grows them, and merging.

`PatternStore` keeps patterns in the home's memory.db (never trimmed automatically);
`FeedbackLoop` records signal -> routing -> outcome with evidence in the episodic trace and
creates a pattern after repeated success; `Generalizer` merges similar patterns.
"""

from hrm.learning.feedback import (
    FeedbackLoop,
    LearningEvent,
    OutcomeRecord,
    SessionAnalysis,
)
from hrm.learning.generalizer import Generalizer
from hrm.learning.patterns import Pattern, PatternStore, signature_similarity

__all__ = [
    "FeedbackLoop",
    "Generalizer",
    "LearningEvent",
    "OutcomeRecord",
    "Pattern",
    "PatternStore",
    "SessionAnalysis",
    "signature_similarity",
]
