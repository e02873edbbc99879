"""Generalizer: similar patterns found and merged into broader ones, all evidence kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.learning import Generalizer, Pattern, PatternStore, signature_similarity
from hrm.storage.sqlite import Database

T0 = datetime(2026, 1, 1, tzinfo=UTC)
generalizer = Generalizer()


def pattern(
    pid: str,
    *,
    complexity: str = "simple",
    domain: list[str] | None = None,
    strategy: str = "quick_answer",
    evidence: list[str] | None = None,
    confidence: float = 0.8,
    protected: bool = False,
    age: int = 0,
) -> Pattern:
    return Pattern(
        id=pid,
        pattern_type="strategy",
        input_signature={"complexity": complexity, "stakes": "low", "horizon": "immediate",
                         "domain": domain if domain is not None else ["code"]},
        recommended_action={"strategy": strategy},
        confidence=confidence,
        evidence_ids=evidence if evidence is not None else [f"{pid}_e1"],
        created_at=T0 + timedelta(days=age),
        protected=protected,
    )


def test_similar_pairs_share_type_action_and_most_of_the_signature() -> None:
    a = pattern("a")
    b = pattern("b", domain=["code", "data"])
    c = pattern("c", strategy="exploration")
    d = pattern("d", complexity="complex", domain=["legal"])
    pairs = generalizer.find_similar([a, b, c, d])
    assert [(x.id, y.id) for x, y, _ in pairs] == [("a", "b")]
    assert pairs[0][2] == pytest.approx(0.7 * 0.8 + 0.3)
    assert generalizer.similarity(a, c) <= 0.7  # different actions never reach the threshold


def test_merge_keeps_all_evidence_and_broadens_the_signature() -> None:
    a = pattern("a", evidence=["e1", "e2", "e3"], confidence=0.9, age=2)
    b = pattern("b", complexity="moderate", domain=["data"], evidence=["e3", "e4"],
                confidence=0.6)
    merged = generalizer.merge(a, b)
    assert merged.id == "a"  # more evidence keeps its id
    assert merged.evidence_ids == ["e1", "e2", "e3", "e4"]
    assert merged.input_signature["complexity"] == ["moderate", "simple"]
    assert merged.input_signature["domain"] == ["code", "data"]
    assert merged.confidence == pytest.approx((0.9 * 3 + 0.6 * 2) / 5)
    assert merged.created_at == T0
    for original in (a.input_signature, b.input_signature):
        assert signature_similarity(merged.input_signature, original) > 0.6


def test_protected_identity_survives_and_two_protected_never_merge() -> None:
    small = pattern("small", protected=True)
    big = pattern("big", evidence=["x", "y", "z"])
    assert generalizer.merge(small, big).id == "small"
    assert generalizer.merge(small, big).protected
    twins = [pattern("p1", protected=True), pattern("p2", protected=True)]
    assert generalizer.generalize_batch(twins) == twins


def test_generalize_batch_merges_until_nothing_is_similar() -> None:
    patterns = [
        pattern("a", evidence=["1"]),
        pattern("b", evidence=["2"], domain=["code", "data"]),
        pattern("c", evidence=["3"]),
        pattern("z", complexity="complex", strategy="verification", domain=["legal"]),
    ]
    result = generalizer.generalize_batch(patterns)
    assert [p.id for p in result] == ["a", "z"]
    assert sorted(result[0].evidence_ids) == ["1", "2", "3"]


def test_merged_pattern_can_replace_a_stored_one(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    for p in (pattern("a", evidence=["1", "2"]), pattern("b", complexity="moderate")):
        store.add_pattern(p)
    merged = generalizer.merge(store.get_pattern("a"), store.get_pattern("b"))  # type: ignore[arg-type]
    store.replace_pattern(merged)
    store.remove("b")
    moderate = {"complexity": "moderate", "stakes": "low", "horizon": "immediate",
                "domain": ["code"]}
    (match,) = store.search(moderate)
    assert match.pattern_id == "a" and match.evidence_count == 3


evidence = st.lists(st.text(alphabet="abcdef", min_size=1, max_size=3), max_size=5)


@settings(max_examples=150, deadline=None)
@given(evidence, evidence, st.floats(0, 1), st.floats(0, 1),
       st.sampled_from(["simple", "moderate", "complex"]))
def test_merge_preserves_evidence_and_bounds_confidence(
    e1: list[str], e2: list[str], c1: float, c2: float, complexity: str
) -> None:
    a = pattern("a", evidence=e1, confidence=c1)
    b = pattern("b", evidence=e2, confidence=c2, complexity=complexity)
    merged = generalizer.merge(a, b)
    assert set(merged.evidence_ids) == set(e1) | set(e2)
    assert len(merged.evidence_ids) == len(set(merged.evidence_ids))
    assert min(c1, c2) - 1e-6 <= merged.confidence <= max(c1, c2) + 1e-6  # rounded to 6 places
    assert generalizer.similarity(a, b) == generalizer.similarity(b, a)
