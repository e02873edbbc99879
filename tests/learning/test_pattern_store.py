"""PatternStore: persisted patterns, matched by signature, strengthened, weakened, protected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.learning import Pattern, PatternStore, signature_similarity
from hrm.learning import patterns as patterns_module
from hrm.storage.sqlite import Database

SIG = {"complexity": "simple", "stakes": "low", "horizon": "immediate", "domain": ["code"]}


def new_pattern(clock: Any, signature: dict[str, Any] | None = None, **overrides: Any) -> Pattern:
    fields: dict[str, Any] = {
        "id": "",
        "pattern_type": "strategy",
        "input_signature": signature or dict(SIG),
        "recommended_action": {"strategy": "quick_answer"},
        "confidence": 0.8,
        "evidence_ids": ["ep_1", "ep_2", "ep_3"],
        "created_at": clock(),
    }
    fields.update(overrides)
    return Pattern(**fields)


def test_add_get_round_trip(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    pattern = new_pattern(clock)
    pid = store.add_pattern(pattern)
    assert pid.startswith("pat_")
    stored = store.get_pattern(pid)
    assert stored is not None
    assert (stored.input_signature, stored.evidence_ids, stored.confidence) == (
        SIG, ["ep_1", "ep_2", "ep_3"], 0.8
    )
    assert stored.created_at == pattern.created_at
    assert store.get_pattern("missing") is None


def test_search_scores_similarity_times_confidence(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    exact = store.add_pattern(new_pattern(clock))
    other = dict(SIG, stakes="high", domain=["code", "ops"])
    near = store.add_pattern(new_pattern(clock, other, confidence=0.9))
    store.add_pattern(new_pattern(clock, {"complexity": "complex", "stakes": "high",
                                          "horizon": "far", "domain": ["legal"]}))
    matches = store.search(SIG)
    assert [m.pattern_id for m in matches] == [exact, near]
    assert matches[0].match_confidence == pytest.approx(0.8)
    assert matches[0].recommended_strategy == "quick_answer"
    assert matches[0].evidence_count == 3
    assert matches[1].match_confidence == pytest.approx((0.4 + 0.4 * 0.5) * 0.9)


def test_strengthen_moves_towards_one_and_links_evidence(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    pid = store.add_pattern(new_pattern(clock, confidence=0.5))
    store.strengthen(pid, "ep_9")
    pattern = store.get_pattern(pid)
    assert pattern is not None
    assert pattern.confidence == pytest.approx(0.6)
    assert pattern.evidence_ids[-1] == "ep_9"
    assert pattern.match_count == 1 and pattern.last_matched_at is not None


def test_weaken_multiplies_and_keeps_the_reason(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    pid = store.add_pattern(new_pattern(clock, confidence=0.5))
    store.weaken(pid, "answer was wrong")
    pattern = store.get_pattern(pid)
    assert pattern is not None
    assert pattern.confidence == pytest.approx(0.4)
    assert pattern.weaken_reasons == ["answer was wrong"]


def test_protected_patterns_cannot_be_removed(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    kept = store.add_pattern(new_pattern(clock))
    gone = store.add_pattern(new_pattern(clock))
    store.protect(kept)
    with pytest.raises(HRMError) as err:
        store.remove(kept)
    assert err.value.code == ErrorCode.VALIDATION_FAILED
    assert err.value.context["pattern_id"] == kept
    store.remove(gone)
    assert store.get_pattern(gone) is None and store.get_pattern(kept) is not None


def test_weakening_never_deletes(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    pid = store.add_pattern(new_pattern(clock, confidence=0.2))
    for _ in range(50):
        store.weaken(pid, "again")
    pattern = store.get_pattern(pid)
    assert pattern is not None and pattern.confidence < 0.01


def test_unknown_ids_and_bad_confidence_are_errors(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    for call in (lambda: store.strengthen("nope", "e"), lambda: store.weaken("nope", "r"),
                 lambda: store.protect("nope"), lambda: store.remove("nope")):
        with pytest.raises(HRMError) as err:
            call()
        assert err.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(HRMError) as bad:
        store.add_pattern(new_pattern(clock, confidence=1.5))
    assert bad.value.code == ErrorCode.VALIDATION_FAILED
    pid = store.add_pattern(new_pattern(clock))
    with pytest.raises(HRMError):
        store.add_pattern(new_pattern(clock, id=pid))


def test_secrets_are_scrubbed_before_storage(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    secret = "sk-ant-api03-" + "a" * 40
    pid = store.add_pattern(new_pattern(clock, recommended_action={"strategy": "quick_answer",
                                                                   "note": secret}))
    row = db.one("SELECT recommended_action FROM learning_patterns WHERE id = ?", (pid,))
    assert row is not None and secret not in row[0]


def test_another_connection_sees_writes(db_path: Path, clock: Any) -> None:
    with Database(db_path) as first, Database(db_path) as second:
        reader = PatternStore(first, clock=clock)
        assert reader.search(SIG) == []
        writer = PatternStore(second, clock=clock)
        pid = writer.add_pattern(new_pattern(clock))
        assert [m.pattern_id for m in reader.search(SIG)] == [pid]
        writer.weaken(pid, "x")
        assert reader.search(SIG)[0].match_confidence == pytest.approx(0.64)


def test_scopes_isolate_stacks_and_share_the_shared_scope(db: Database, clock: Any) -> None:
    shared = PatternStore(db, clock=clock)
    admin = PatternStore(db, "ADMIN", clock=clock)
    resident = PatternStore(db, "RESIDENT:DoPeJar", clock=clock)
    common = shared.add_pattern(new_pattern(clock))
    own = admin.add_pattern(new_pattern(clock))
    assert {m.pattern_id for m in admin.search(SIG)} == {common, own}
    assert {m.pattern_id for m in resident.search(SIG)} == {common}
    with pytest.raises(HRMError):
        resident.strengthen(own, "e")


domain = st.lists(st.sampled_from(["code", "data", "ops", "writing"]), max_size=3, unique=True)
signature = st.fixed_dictionaries({
    "complexity": st.sampled_from(["simple", "moderate", "complex"]),
    "stakes": st.sampled_from(["low", "medium", "high"]),
    "horizon": st.sampled_from(["immediate", "near", "far"]),
    "domain": domain,
})


@settings(max_examples=200, deadline=None)
@given(signature, signature)
def test_similarity_is_bounded_and_exact_matches_score_one(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    score = signature_similarity(a, b)
    assert 0.0 <= score <= 1.0
    assert signature_similarity(a, a) == 1.0
    assert score == signature_similarity(b, a)


def test_own_write_does_not_hide_another_connections_write(db_path: Path, clock: Any) -> None:
    with Database(db_path) as first, Database(db_path) as second:
        mine = PatternStore(first, clock=clock)
        theirs = PatternStore(second, clock=clock)
        assert mine.search(SIG) == []
        other = theirs.add_pattern(new_pattern(clock))
        own = mine.add_pattern(new_pattern(clock))
        assert {m.pattern_id for m in mine.search(SIG)} == {own, other}


def test_search_answers_are_copies(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    store.add_pattern(new_pattern(clock))
    store.search(SIG)[0].match_confidence = 0.0
    assert store.search(SIG)[0].match_confidence == pytest.approx(0.8)


def test_summaries_follow_every_change(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    first = store.add_pattern(new_pattern(clock))
    second = store.add_pattern(new_pattern(clock, dict(SIG, stakes="high"), confidence=0.5))
    summaries = store.summaries()
    assert [(s.id, s.strategy, s.confidence, s.evidence_count) for s in summaries] == [
        (first, "quick_answer", 0.8, 3), (second, "quick_answer", 0.5, 3)
    ]
    assert json.loads(summaries[0].signature_text) == SIG
    store.strengthen(first, "ep_9")
    after = store.summaries(limit=1)
    assert (after[0].confidence, after[0].evidence_count) == (pytest.approx(0.84), 4)
    store.weaken(second, "wrong")
    peeked = store.peek(second)
    assert peeked is not None and peeked.confidence == pytest.approx(0.4)
    assert store.peek("missing") is None


def test_search_and_strengthen_track_confidence_and_other_writers(
    db_path: Path, clock: Any
) -> None:
    """A remembered search still ranks by today's confidence; a strengthen starts from what
    another connection stored, not from this store's older copy."""
    with Database(db_path) as first, Database(db_path) as second:
        mine = PatternStore(first, clock=clock)
        strong = mine.add_pattern(new_pattern(clock, confidence=0.8))
        weak = mine.add_pattern(new_pattern(clock, confidence=0.7))
        assert [m.pattern_id for m in mine.search(SIG)] == [strong, weak]
        for n in range(4):
            mine.strengthen(weak, f"ep_w{n}")
        ranked = mine.search(SIG)
        assert [m.pattern_id for m in ranked] == [weak, strong]  # overtook it
        assert ranked[0].match_confidence == pytest.approx(1 - 0.3 * 0.8**4, abs=1e-4)
        PatternStore(second, clock=clock).weaken(strong, "wrong elsewhere")  # 0.8 -> 0.64
        mine.strengthen(strong, "ep_s")
        stored = PatternStore(second, clock=clock).get_pattern(strong)
        assert stored is not None and stored.confidence == pytest.approx(0.64 + 0.36 * 0.2)
        assert stored.weaken_reasons == ["wrong elsewhere"]


def test_linking_the_same_evidence_twice_adds_it_once(db: Database, clock: Any) -> None:
    store = PatternStore(db, clock=clock)
    pid = store.add_pattern(new_pattern(clock))
    store.strengthen(pid, "ep_1")
    pattern = store.get_pattern(pid)
    assert pattern is not None and pattern.evidence_ids == ["ep_1", "ep_2", "ep_3"]
    assert pattern.match_count == 1


_VALUES = st.one_of(
    st.sampled_from(["simple", "moderate", "high", "low", "immediate"]), st.integers(-2, 2),
    st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.sampled_from(["code", "data", "ops", "general"]), max_size=3),
    st.lists(st.sampled_from(["code", "data"]), max_size=2).map(tuple),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@given(st.lists(
    st.dictionaries(st.sampled_from(["complexity", "stakes", "horizon", "domain", "other"]),
                    _VALUES, max_size=5),
    min_size=1, max_size=6,
))
def test_signature_keys_are_the_same_answered_from_memory(signatures: list[dict[str, Any]]) -> None:
    for signature in signatures * 2:  # the second round is answered from the memo
        assert patterns_module.signature_key(signature) == patterns_module._signature_key(signature)
