"""Confidence markers for findings (003 §5), where the spec places them: see `hrm.confidence`.

The implementation sits at the root of the package so that `hrm.runtime` (agents' findings) can
use it without importing upward into continuity (D251); these are the same objects.
"""

from __future__ import annotations

from hrm.confidence import (
    MARKERS,
    CodeLocation,
    Confidence,
    Evidence,
    EvidenceType,
    Finding,
    FormattedOutput,
    Importance,
    MarkedFinding,
    OutputSection,
    VerificationStatus,
    format_output,
    infer_confidence,
    mark_finding,
    render_markdown,
)

__all__ = [
    "MARKERS",
    "CodeLocation",
    "Confidence",
    "Evidence",
    "EvidenceType",
    "Finding",
    "FormattedOutput",
    "Importance",
    "MarkedFinding",
    "OutputSection",
    "VerificationStatus",
    "format_output",
    "infer_confidence",
    "mark_finding",
    "render_markdown",
]
