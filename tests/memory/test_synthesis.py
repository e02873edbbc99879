"""Semantic Synthesis (001 §6.3): patterns linked to the episodes they were learned from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.memory.episodic import EpisodicTraceStore
from hrm.memory.synthesis import SemanticSynthesisStore
from hrm.memory.types import EpisodeEntry, SynthesizedPattern
from hrm.storage.sqlite import Database


@pytest.fixture
def episodic(db: Database, home: HRMHome, clock: Any) -> Iterator[EpisodicTraceStore]:
    trace = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    yield trace
    trace.close()


@pytest.fixture
def store(db: Database, episodic: EpisodicTraceStore, clock: Any) -> SemanticSynthesisStore:
    return SemanticSynthesisStore(db, episodic, clock=clock)


def evidence(episodic: EpisodicTraceStore, n: int) -> list[str]:
    return [episodic.append(EpisodeEntry(content={"i": i})) for i in range(n)]


def pattern(**fields: Any) -> SynthesizedPattern:
    base: dict[str, Any] = {
        "pattern_type": "routing",
        "description": "debug questions go to the deep strategy",
        "input_signature": {"domain": "debugging"},
        "recommended_action": {"strategy": "deep"},
        "confidence": 0.6,
    }
    base.update(fields)
    return SynthesizedPattern(**base)


def test_add_and_get_round_trip(
    store: SemanticSynthesisStore, episodic: EpisodicTraceStore, clock: Any
) -> None:
    ids = evidence(episodic, 2)
    pattern_id = store.add_pattern(pattern(evidence_ids=ids))
    got = store.get_pattern(pattern_id)
    assert pattern_id.startswith("syn_")
    assert got == pattern(
        id=pattern_id, evidence_ids=ids, created_at=clock(), last_strengthened_at=clock()
    )


def test_search_by_type_and_min_confidence_highest_first(store: SemanticSynthesisStore) -> None:
    low = store.add_pattern(pattern(confidence=0.2))
    high = store.add_pattern(pattern(confidence=0.9))
    other = store.add_pattern(pattern(pattern_type="tone", confidence=0.8))
    assert [p.id for p in store.search()] == [high, other, low]
    assert [p.id for p in store.search("routing")] == [high, low]
    assert [p.id for p in store.search(min_confidence=0.8)] == [high, other]
    assert store.search("nothing") == []


def test_strengthen_adds_evidence_and_raises_confidence(
    store: SemanticSynthesisStore, episodic: EpisodicTraceStore, clock: Any
) -> None:
    first, second = evidence(episodic, 2)
    pattern_id = store.add_pattern(pattern(confidence=0.5, evidence_ids=[first]))
    clock.advance(hours=1)
    store.strengthen(pattern_id, second)
    got = store.get_pattern(pattern_id)
    assert got.confidence == pytest.approx(0.6)
    assert got.evidence_ids == [first, second]
    assert got.last_strengthened_at == clock()
    store.strengthen(pattern_id, second)
    assert store.get_pattern(pattern_id).confidence == pytest.approx(0.6)


def test_weaken_lowers_confidence_and_keeps_the_reason(store: SemanticSynthesisStore) -> None:
    pattern_id = store.add_pattern(pattern(confidence=0.5))
    store.weaken(pattern_id, "failed on 2026-11-21")
    store.weaken(pattern_id, "failed again")
    assert store.get_pattern(pattern_id).confidence == pytest.approx(0.32)
    assert [(w.reason, round(w.confidence_after, 2)) for w in store.weakenings(pattern_id)] == [
        ("failed on 2026-11-21", 0.4),
        ("failed again", 0.32),
    ]
    with pytest.raises(HRMError):
        store.weaken(pattern_id, " ")


def test_evidence_chain_returns_the_episodes_in_link_order(
    store: SemanticSynthesisStore, episodic: EpisodicTraceStore
) -> None:
    a, b, c = evidence(episodic, 3)
    pattern_id = store.add_pattern(pattern(evidence_ids=[c, a]))
    store.strengthen(pattern_id, b)
    assert [e.id for e in store.get_evidence_chain(pattern_id)] == [c, a, b]
    assert [e.content["i"] for e in store.get_evidence_chain(pattern_id)] == [2, 0, 1]


def test_evidence_must_exist_in_the_trace(
    store: SemanticSynthesisStore, episodic: EpisodicTraceStore
) -> None:
    (real,) = evidence(episodic, 1)
    with pytest.raises(HRMError) as info:
        store.add_pattern(pattern(evidence_ids=[real, "ep_ghost"]))
    assert info.value.code is ErrorCode.NOT_FOUND and "ep_ghost" in info.value.message
    assert store.search() == []
    pattern_id = store.add_pattern(pattern(evidence_ids=[real]))
    with pytest.raises(HRMError):
        store.strengthen(pattern_id, "ep_ghost")
    assert store.get_pattern(pattern_id).confidence == 0.6


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"confidence": 1.5}, "confidence", id="confidence"),
        pytest.param({"pattern_type": ""}, "pattern_type", id="type"),
        pytest.param({"input_signature": {"x": object()}}, "$.x", id="signature"),
    ],
)
def test_bad_patterns_are_rejected(
    store: SemanticSynthesisStore, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(HRMError) as info:
        store.add_pattern(pattern(**fields))
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert message in info.value.message
    assert store.search() == []


def test_unknown_patterns_are_not_found(store: SemanticSynthesisStore) -> None:
    for call in (
        lambda: store.get_pattern("syn_x"),
        lambda: store.weaken("syn_x", "r"),
        lambda: store.get_evidence_chain("syn_x"),
    ):
        with pytest.raises(HRMError) as info:
            call()
        assert info.value.code is ErrorCode.NOT_FOUND


def test_an_id_cannot_be_reused(store: SemanticSynthesisStore) -> None:
    store.add_pattern(pattern(id="syn_fixed"))
    with pytest.raises(HRMError):
        store.add_pattern(pattern(id="syn_fixed"))


def test_stacks_are_isolated(db: Database, home: HRMHome, clock: Any) -> None:
    admin_trace = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    other_trace = EpisodicTraceStore(db, home, "RESIDENT:x", clock=clock)
    admin = SemanticSynthesisStore(db, admin_trace, clock=clock)
    other = SemanticSynthesisStore(db, other_trace, clock=clock)
    admin_evidence = admin_trace.append(EpisodeEntry())
    pattern_id = admin.add_pattern(pattern(evidence_ids=[admin_evidence]))
    assert other.search() == []
    with pytest.raises(HRMError):
        other.get_pattern(pattern_id)
    with pytest.raises(HRMError):
        other.add_pattern(pattern(evidence_ids=[admin_evidence]))
    admin_trace.close()
    other_trace.close()
