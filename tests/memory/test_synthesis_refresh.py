"""`SemanticSynthesisStore.refresh`: a learned pattern's entry follows the learning store, its
evidence only ever growing (D286)."""

from __future__ import annotations

import dataclasses
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


def _evidence(episodic: EpisodicTraceStore, n: int) -> list[str]:
    return [episodic.append(EpisodeEntry(content={"i": i})) for i in range(n)]


def _learned(evidence: list[str], confidence: float = 0.8) -> SynthesizedPattern:
    return SynthesizedPattern(
        id="learned_pat_1", pattern_type="strategy", description="For simple: quick_answer",
        input_signature={"complexity": "simple"}, recommended_action={"strategy": "quick"},
        confidence=confidence, evidence_ids=evidence,
    )


def test_refresh_replaces_the_content_and_links_only_the_new_evidence(
    store: SemanticSynthesisStore, episodic: EpisodicTraceStore
) -> None:
    first = _evidence(episodic, 2)
    store.add_pattern(_learned(first))
    more = _evidence(episodic, 2)
    broader = dataclasses.replace(
        _learned([*first, *more]), input_signature={"complexity": ["moderate", "simple"]},
        confidence=0.87, description="For simple or moderate: quick_answer",
    )
    assert store.refresh(broader) == 2
    stored = store.get_pattern("learned_pat_1")
    assert stored.evidence_ids == [*first, *more]
    assert stored.input_signature == {"complexity": ["moderate", "simple"]}
    assert stored.confidence == 0.87 and stored.description.startswith("For simple or")
    assert store.refresh(broader) == 0  # the same observations are linked once
    fewer = dataclasses.replace(broader, evidence_ids=more)
    store.refresh(fewer)
    assert store.get_pattern("learned_pat_1").evidence_ids == [*first, *more]  # never unlinked


def test_refresh_of_an_unknown_pattern_or_missing_evidence_changes_nothing(
    store: SemanticSynthesisStore, episodic: EpisodicTraceStore
) -> None:
    ids = _evidence(episodic, 1)
    with pytest.raises(HRMError) as unknown:
        store.refresh(_learned(ids))
    assert unknown.value.code is ErrorCode.NOT_FOUND
    store.add_pattern(_learned(ids))
    with pytest.raises(HRMError) as missing:
        store.refresh(_learned([*ids, "ep_nowhere"], confidence=0.9))
    assert missing.value.code is ErrorCode.NOT_FOUND and "ep_nowhere" in missing.value.message
    assert store.get_pattern("learned_pat_1").confidence == 0.8
    with pytest.raises(HRMError) as bad:
        store.refresh(_learned(ids, confidence=1.5))
    assert bad.value.code is ErrorCode.VALIDATION_FAILED
