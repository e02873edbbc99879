"""Confidence markers follow 003 §5 exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity.confidence import (
    MARKERS,
    CodeLocation,
    Evidence,
    EvidenceType,
    Finding,
    Importance,
    VerificationStatus,
    format_output,
    infer_confidence,
    mark_finding,
    render_markdown,
)
from hrm.errors import ErrorCode, HRMError

E = EvidenceType
V = VerificationStatus


def ev(kind: EvidenceType) -> Evidence:
    return Evidence(kind, f"{kind.value} evidence")


@pytest.mark.parametrize(
    ("kinds", "level", "score"),
    [
        ([E.FILE_READ, E.TRACE], V.VERIFIED, 0.9),
        ([E.TRACE, E.ASSUMPTION, E.FILE_READ], V.VERIFIED, 0.9),
        ([E.FILE_READ], V.VERIFIED, 0.8),
        ([E.FILE_READ, E.ASSUMPTION], V.VERIFIED, 0.8),
        ([E.GREP_MATCH, E.GREP_MATCH], V.INFERRED, 0.5),
        ([E.GREP_MATCH, E.ASSUMPTION], V.UNCERTAIN, 0.2),
        ([E.ASSUMPTION], V.UNCERTAIN, 0.2),
        ([E.AST_PARSE], V.UNCERTAIN, 0.3),
        ([E.TRACE], V.UNCERTAIN, 0.3),
        ([E.GREP_MATCH, E.AST_PARSE], V.UNCERTAIN, 0.3),
    ],
)
def test_infer_confidence_table(kinds: list[EvidenceType], level: V, score: float) -> None:
    confidence = infer_confidence([ev(k) for k in kinds])
    assert (confidence.level, confidence.score) == (level, score)
    assert confidence.reasoning


@settings(max_examples=100)
@given(st.lists(st.sampled_from(EvidenceType), min_size=1, max_size=6))
def test_score_always_matches_level(kinds: list[EvidenceType]) -> None:
    confidence = infer_confidence([ev(k) for k in kinds])
    allowed = {V.VERIFIED: {0.8, 0.9}, V.INFERRED: {0.5}, V.UNCERTAIN: {0.2, 0.3}}
    assert confidence.score in allowed[confidence.level]
    marked = mark_finding(Finding("claim"), [ev(k) for k in kinds])
    assert marked.marker == MARKERS[confidence.level]
    strengths = [list(EvidenceType).index(e.type) for e in marked.evidence_chain]
    order = [E.FILE_READ, E.TRACE, E.AST_PARSE, E.GREP_MATCH, E.ASSUMPTION]
    assert [order.index(e.type) for e in marked.evidence_chain] == sorted(
        order.index(e.type) for e in marked.evidence_chain
    )
    assert len(strengths) == len(kinds)


def test_empty_evidence_or_claim_is_rejected() -> None:
    with pytest.raises(HRMError) as caught:
        infer_confidence([])
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    with pytest.raises(HRMError):
        mark_finding(Finding("  "), [ev(E.FILE_READ)])


def test_review_needed_for_uncertain_and_important_inferences() -> None:
    grep = [ev(E.GREP_MATCH)]
    assert mark_finding(Finding("a", importance=Importance.CRITICAL), grep).requires_review
    assert not mark_finding(Finding("a", importance=Importance.MINOR), grep).requires_review
    assert mark_finding(
        Finding("a", importance=Importance.MINOR), [ev(E.ASSUMPTION)]
    ).requires_review
    assert not mark_finding(Finding("a"), [ev(E.FILE_READ)]).requires_review


def test_format_output_groups_and_counts() -> None:
    findings = [
        mark_finding(Finding("v1", importance=Importance.MINOR), [ev(E.FILE_READ)]),
        mark_finding(Finding("u1"), [ev(E.ASSUMPTION)]),
        mark_finding(
            Finding("v2", CodeLocation("a.py", 3, 9), Importance.CRITICAL),
            [ev(E.FILE_READ), ev(E.TRACE)],
        ),
        mark_finding(Finding("i1"), [ev(E.GREP_MATCH)]),
    ]
    output = format_output(findings)
    assert (output.total_findings, output.verified_count, output.inferred_count) == (4, 2, 1)
    assert output.uncertain_count == 1 and output.requires_review_count == 2
    assert [s.title for s in output.sections] == ["✓ Verified", "? Inferred", "✗ Uncertain"]
    assert [f.finding.claim for f in output.sections[0].findings] == ["v2", "v1"]
    assert output.sections[0].confidence_summary == "2 findings, average confidence 0.85"
    text = render_markdown(output)
    assert "- ✓ v2 (a.py:3-9) [0.9]" in text and "4 findings: 2 verified" in text
