"""Confidence markers for findings (003 §5 `ConfidenceMarker`): how sure a claim may be.

An agent that claims "function X is never called" after a grep is less sure than one that read
the file and traced the calls. `infer_confidence` turns the kinds of evidence behind a claim into
a level (VERIFIED ✓, INFERRED ?, UNCERTAIN ✗) with the exact scores of 003 §5; `mark_finding`
attaches it to a finding with its evidence ordered strongest first; `format_output` groups
findings by level with counts a reader can trust. Handoff learnings reuse `VerificationStatus`.

It lives at the root of the package, beside the error type it uses and nothing else, because
it is used on both sides of the layer order: agents' findings are marked in `hrm.runtime`, which
may not import `hrm.continuity`, and handoffs' in `hrm.continuity`, which re-exports these names
from `hrm.continuity.confidence` as 003 places them (D251).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from hrm.errors import HRMError

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


class VerificationStatus(str, Enum):
    """How a claim was checked (003 DTOs): the level of a `Confidence`."""

    VERIFIED = "verified"
    """✓ Read the files, traced the code."""
    INFERRED = "inferred"
    """? Based on grep or search results."""
    UNCERTAIN = "uncertain"
    """✗ Not checked."""


class EvidenceType(str, Enum):
    """Where a piece of evidence came from (003 §5)."""

    FILE_READ = "file_read"
    GREP_MATCH = "grep_match"
    AST_PARSE = "ast_parse"
    ASSUMPTION = "assumption"
    TRACE = "trace"


class Importance(str, Enum):
    """How much a finding matters to the reader (003 §5)."""

    CRITICAL = "critical"
    IMPORTANT = "important"
    MINOR = "minor"


MARKERS: dict[VerificationStatus, str] = {
    VerificationStatus.VERIFIED: "✓",
    VerificationStatus.INFERRED: "?",
    VerificationStatus.UNCERTAIN: "✗",
}
"""The symbol printed before a finding of each level."""

# Strongest first. FILE_READ leads because 003 §5 makes it sufficient for VERIFIED on its own;
# TRACE only strengthens a read; an ASSUMPTION is no evidence at all.
_STRENGTH: dict[EvidenceType, int] = {
    EvidenceType.FILE_READ: 0,
    EvidenceType.TRACE: 1,
    EvidenceType.AST_PARSE: 2,
    EvidenceType.GREP_MATCH: 3,
    EvidenceType.ASSUMPTION: 4,
}
_LEVEL_ORDER = tuple(VerificationStatus)
_IMPORTANCE_ORDER = {Importance.CRITICAL: 0, Importance.IMPORTANT: 1, Importance.MINOR: 2}
_SECTION_TITLES = {
    VerificationStatus.VERIFIED: "Verified",
    VerificationStatus.INFERRED: "Inferred",
    VerificationStatus.UNCERTAIN: "Uncertain",
}


@dataclass(frozen=True)
class CodeLocation:
    """Where in the code a finding applies."""

    path: str
    line_start: int | None = None
    line_end: int | None = None

    def __str__(self) -> str:
        if self.line_start is None:
            return self.path
        if self.line_end is None or self.line_end == self.line_start:
            return f"{self.path}:{self.line_start}"
        return f"{self.path}:{self.line_start}-{self.line_end}"


@dataclass(frozen=True)
class Finding:
    """A claim an agent makes about the code."""

    claim: str
    location: CodeLocation | None = None
    importance: Importance = Importance.IMPORTANT


@dataclass(frozen=True)
class Evidence:
    """One thing that supports a claim."""

    type: EvidenceType
    description: str
    source: str | None = None
    """The file the evidence came from, if any."""
    line_range: tuple[int, int] | None = None
    """First and last line of the evidence in `source`."""


@dataclass(frozen=True)
class Confidence:
    """How sure a claim is; `score` is fixed by `level` and the evidence (003 §5)."""

    level: VerificationStatus
    score: float
    reasoning: str


@dataclass(frozen=True)
class MarkedFinding:
    """A finding with its confidence, marker and the evidence behind it, strongest first."""

    finding: Finding
    confidence: Confidence
    marker: str
    evidence_chain: tuple[Evidence, ...]
    requires_review: bool
    """True when a person should check it before acting: uncertain findings, and inferred
    findings that are not minor."""


@dataclass(frozen=True)
class OutputSection:
    """The findings of one confidence level."""

    title: str
    findings: tuple[MarkedFinding, ...]
    confidence_summary: str


@dataclass(frozen=True, kw_only=True)
class FormattedOutput:
    """Findings grouped by confidence level, with counts that add up to `total_findings`."""

    sections: tuple[OutputSection, ...]
    total_findings: int
    verified_count: int
    inferred_count: int
    uncertain_count: int
    requires_review_count: int = field(default=0)


def infer_confidence(evidence: Sequence[Evidence]) -> Confidence:
    """The confidence a set of evidence supports, exactly as 003 §5 specifies.

    FILE_READ with TRACE → VERIFIED 0.9; FILE_READ → VERIFIED 0.8; only GREP_MATCH → INFERRED
    0.5; any ASSUMPTION → UNCERTAIN 0.2; anything else → UNCERTAIN 0.3.

    Raises:
        HRMError: ``VALIDATION_FAILED`` when `evidence` is empty.
    """
    if not evidence:
        raise HRMError.validation_failed(
            "infer_confidence needs at least one piece of evidence", field="evidence"
        )
    kinds = {item.type for item in evidence}
    if EvidenceType.FILE_READ in kinds and EvidenceType.TRACE in kinds:
        return Confidence(VerificationStatus.VERIFIED, 0.9, "File read and execution traced")
    if EvidenceType.FILE_READ in kinds:
        return Confidence(VerificationStatus.VERIFIED, 0.8, "File read directly")
    if kinds == {EvidenceType.GREP_MATCH}:
        return Confidence(VerificationStatus.INFERRED, 0.5, "Based on search matches only")
    if EvidenceType.ASSUMPTION in kinds:
        return Confidence(VerificationStatus.UNCERTAIN, 0.2, "Rests on an assumption")
    names = ", ".join(sorted(kind.value for kind in kinds))
    return Confidence(VerificationStatus.UNCERTAIN, 0.3, f"No file read to confirm ({names})")


def mark_finding(finding: Finding, evidence: Sequence[Evidence]) -> MarkedFinding:
    """Attach confidence, marker and the evidence chain (strongest first) to a finding.

    Raises:
        HRMError: ``VALIDATION_FAILED`` when the claim is blank or `evidence` is empty.
    """
    if not finding.claim.strip():
        raise HRMError.validation_failed("A finding needs a non-empty claim", field="claim")
    confidence = infer_confidence(evidence)
    chain = tuple(sorted(evidence, key=lambda item: _STRENGTH[item.type]))
    level = confidence.level
    review = level is VerificationStatus.UNCERTAIN or (
        level is VerificationStatus.INFERRED and finding.importance is not Importance.MINOR
    )
    return MarkedFinding(
        finding=finding,
        confidence=confidence,
        marker=MARKERS[confidence.level],
        evidence_chain=chain,
        requires_review=review,
    )


def format_output(findings: Sequence[MarkedFinding]) -> FormattedOutput:
    """Group findings by confidence level (verified, inferred, uncertain; empty levels omitted).

    Within a section findings keep their order after a stable sort by importance, most
    important first.
    """
    by_level: dict[VerificationStatus, list[MarkedFinding]] = {level: [] for level in _LEVEL_ORDER}
    for item in findings:
        by_level[item.confidence.level].append(item)
    sections = []
    for level in _LEVEL_ORDER:
        group = sorted(by_level[level], key=lambda m: _IMPORTANCE_ORDER[m.finding.importance])
        if not group:
            continue
        sections.append(
            OutputSection(
                title=f"{MARKERS[level]} {_SECTION_TITLES[level]}",
                findings=tuple(group),
                confidence_summary=_summary(group),
            )
        )
    return FormattedOutput(
        sections=tuple(sections),
        total_findings=len(findings),
        verified_count=len(by_level[VerificationStatus.VERIFIED]),
        inferred_count=len(by_level[VerificationStatus.INFERRED]),
        uncertain_count=len(by_level[VerificationStatus.UNCERTAIN]),
        requires_review_count=sum(1 for item in findings if item.requires_review),
    )


def _summary(group: Sequence[MarkedFinding]) -> str:
    noun = "finding" if len(group) == 1 else "findings"
    average = sum(item.confidence.score for item in group) / len(group)
    review = sum(1 for item in group if item.requires_review)
    text = f"{len(group)} {noun}, average confidence {average:.2f}"
    return f"{text}, {review} to review" if review else text


def render_markdown(output: FormattedOutput) -> str:
    """The "Verification" section an agent appends to its report (003 Integration 4)."""
    lines = [
        "## Verification",
        "",
        f"{output.total_findings} findings: {output.verified_count} verified, "
        f"{output.inferred_count} inferred, {output.uncertain_count} uncertain.",
    ]
    for section in output.sections:
        lines += ["", f"### {section.title}", f"_{section.confidence_summary}_", ""]
        for item in section.findings:
            where = f" ({item.finding.location})" if item.finding.location else ""
            review = " — needs review" if item.requires_review else ""
            lines.append(
                f"- {item.marker} {item.finding.claim}{where} "
                f"[{item.confidence.score:.1f}]{review}"
            )
            lines.extend(f"  - {ev.type.value}: {ev.description}" for ev in item.evidence_chain)
    return "\n".join(lines) + "\n"
