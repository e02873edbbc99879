"""An agent's findings about code, marked with how sure they are (003 Integration 4, §5).

An agent that answers with a JSON packet may list ``findings``: claims about the code, each with
the evidence behind it (``file_read``, ``grep_match``, ``ast_parse``, ``trace``, ``assumption``).
Each is marked by the ConfidenceMarker (`hrm.confidence`) — ✓ verified, ? inferred, ✗ uncertain,
the score 003 §5 fixes — and the agent's output gets the "Verification" section the spec asks
for, so whoever reads it (a reducer, the lead agent, the person) sees which claims were checked.

A finding's fields are an agent's output, so they are data: an unknown evidence kind counts as
an assumption, a finding with no evidence is marked uncertain, one with no claim is dropped.
"""

from __future__ import annotations

from typing import Any

from hrm.confidence import (
    CodeLocation,
    Evidence,
    EvidenceType,
    Finding,
    Importance,
    MarkedFinding,
    format_output,
    mark_finding,
    render_markdown,
)

__all__ = ["mark_findings", "verification_section"]

_MAX_FINDINGS = 50
_MAX_TEXT = 1000


def mark_findings(raw: object) -> list[MarkedFinding]:
    """The findings of a packet's ``findings`` list, each marked; malformed items dropped."""
    if not isinstance(raw, list):
        return []
    marked = []
    for item in raw[:_MAX_FINDINGS]:
        if not isinstance(item, dict):
            continue
        claim = str(item.get("claim") or "").strip()[:_MAX_TEXT]
        if not claim:
            continue
        evidence = [e for e in map(_evidence, _list(item.get("evidence"))) if e is not None]
        if not evidence:
            evidence = [Evidence(EvidenceType.ASSUMPTION, "no evidence given")]
        finding = Finding(claim=claim, location=_location(item.get("location")),
                          importance=_importance(item.get("importance")))
        marked.append(mark_finding(finding, evidence))
    return marked


def verification_section(marked: list[MarkedFinding]) -> tuple[str, dict[str, int]]:
    """The Markdown "Verification" section and its counts, for the output's metadata."""
    output = format_output(marked)
    counts = {
        "verified": output.verified_count, "inferred": output.inferred_count,
        "uncertain": output.uncertain_count, "requires_review": output.requires_review_count,
    }
    return render_markdown(output), counts


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _evidence(item: object) -> Evidence | None:
    if not isinstance(item, dict):
        return None
    try:
        kind = EvidenceType(str(item.get("type", "")).strip().lower())
    except ValueError:
        kind = EvidenceType.ASSUMPTION  # a kind we cannot check proves nothing
    source = item.get("source")
    return Evidence(kind, str(item.get("description") or kind.value)[:_MAX_TEXT],
                    source=str(source)[:_MAX_TEXT] if source else None)


def _location(raw: object) -> CodeLocation | None:
    if isinstance(raw, str) and raw.strip():
        return CodeLocation(raw.strip()[:_MAX_TEXT])
    if isinstance(raw, dict) and isinstance(raw.get("path"), str):
        start, end = raw.get("line_start"), raw.get("line_end")
        return CodeLocation(raw["path"][:_MAX_TEXT],
                            start if isinstance(start, int) else None,
                            end if isinstance(end, int) else None)
    return None


def _importance(raw: object) -> Importance:
    try:
        return Importance(str(raw).strip().lower())
    except ValueError:
        return Importance.IMPORTANT
