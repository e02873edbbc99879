"""The memory bus (001 §6.1): gated writes that really land where the gate decided, all logged."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.memory.bus import DEFAULT_PROBLEM_ID, WORKING_SET_EXPIRED, MemoryBus
from hrm.memory.types import (
    WRITE_COMPLETED,
    EpisodeEntry,
    MemoryTarget,
    SynthesizedPattern,
    WriteRequest,
    WriteSignals,
)
from hrm.memory.write_gate import NEEDS_USER_CONFIRMATION
from hrm.types import BlastRadius, ConflictLevel


@pytest.fixture
def bus(home: HRMHome, clock: Any) -> Iterator[MemoryBus]:
    memory = MemoryBus.open(home, clock=clock)
    yield memory
    memory.close()


def signals(**fields: Any) -> WriteSignals:
    base: dict[str, Any] = {
        "progress_delta": 0.2,
        "conflict_level": ConflictLevel.NONE,
        "source_quality": 0.9,
        "alignment_score": 0.9,
        "blast_radius": BlastRadius.MINIMAL,
    }
    base.update(fields)
    return WriteSignals(**base)


def writes(bus: MemoryBus) -> list[dict[str, Any]]:
    return [e.content for e in bus.episodic.query(entry_type=WRITE_COMPLETED)][::-1]


def test_approved_shared_write_is_stored_and_logged(bus: MemoryBus) -> None:
    decision = bus.write_to_shared("tone", "formal", "user", signals(), reason="asked")
    assert decision.approved and decision.target is MemoryTarget.SHARED_REFERENCE
    assert bus.shared.get("tone").value == "formal"
    (logged,) = writes(bus)
    assert logged == {
        "target": "shared_reference",
        "key": "tone",
        "approved": True,
        "decision_target": "shared_reference",
        "reason": "Write approved",
        "conditions": [],
        "source": "user",
        "request_reason": "asked",
        "version": 1,
    }


def test_high_conflict_write_really_lands_in_the_working_set(bus: MemoryBus) -> None:
    decision = bus.write_to_shared(
        "deadline", "friday", "agent", signals(conflict_level=ConflictLevel.HIGH),
        problem_id="launch",
    )
    assert decision.approved and decision.target is MemoryTarget.WORKING_SET
    assert bus.shared.list_versions("deadline") == []
    working = bus.working.get("launch")
    assert working is not None and working.partial_artifacts == {"deadline": "friday"}
    (logged,) = writes(bus)
    assert (logged["target"], logged["decision_target"], logged["problem_id"]) == (
        "shared_reference",
        "working_set",
        "launch",
    )


def test_a_redirect_without_problem_uses_the_default_working_set(bus: MemoryBus) -> None:
    bus.write_to_shared("k", 1, "agent", signals(conflict_level=ConflictLevel.HIGH))
    working = bus.working.get(DEFAULT_PROBLEM_ID)
    assert working is not None and working.partial_artifacts == {"k": 1}


def test_low_quality_write_goes_to_the_episodic_trace_only(bus: MemoryBus) -> None:
    decision = bus.write_to_shared("rumour", "x", "web", signals(source_quality=0.1))
    assert decision.target is MemoryTarget.EPISODIC
    assert bus.shared.list_versions("rumour") == []
    (observation,) = bus.episodic.query(entry_type="observation")
    assert observation.content == {"key": "rumour", "value": "x", "source": "web", "reason": ""}
    assert writes(bus)[0]["episode_id"] == observation.id


def test_denied_write_stores_nothing_but_is_logged(bus: MemoryBus) -> None:
    decision = bus.write_to_shared(
        "prod-db", "drop", "agent", signals(blast_radius=BlastRadius.SEVERE, source_quality=0.5)
    )
    assert not decision.approved
    assert bus.shared.list_versions("prod-db") == []
    assert bus.working.list_active() == []
    (logged,) = writes(bus)
    assert logged["approved"] is False and "SEVERE" in logged["reason"]
    (event,) = bus.episodic.query(tags=["denied"])
    assert event.entry_type == WRITE_COMPLETED


def test_preference_needing_confirmation_is_denied_with_the_condition(bus: MemoryBus) -> None:
    decision = bus.write_to_shared(
        "pref:answers", "I prefer short answers", "agent", signals(), is_preference=True
    )
    assert not decision.approved
    assert NEEDS_USER_CONFIRMATION in decision.conditions
    assert bus.shared.keys() == []
    assert NEEDS_USER_CONFIRMATION in writes(bus)[0]["conditions"]


def test_explicit_user_preference_becomes_canon(bus: MemoryBus) -> None:
    decision = bus.write_to_shared(
        "pref:answers", "I prefer short answers", "user", signals(), is_preference=True
    )
    assert decision.approved
    assert bus.shared.get("pref:answers").value == "I prefer short answers"


def test_behavioral_preference_is_kept_as_an_episode(bus: MemoryBus) -> None:
    decision = bus.write_to_shared(
        "pref:hours", "user usually works late", "agent", signals(), is_preference=True
    )
    assert decision.target is MemoryTarget.EPISODIC
    assert bus.episodic.query(entry_type="observation")[0].content["value"] == (
        "user usually works late"
    )


def test_write_to_working_needs_no_gate_and_is_logged(bus: MemoryBus) -> None:
    assert bus.write_to_working("p", "draft", {"v": 1}) is True
    working = bus.working.get("p")
    assert working is not None and working.partial_artifacts == {"draft": {"v": 1}}
    assert writes(bus)[0]["decision_target"] == "working_set"


def test_a_value_that_cannot_be_serialised_writes_and_logs_nothing(bus: MemoryBus) -> None:
    with pytest.raises(HRMError) as info:
        bus.write_to_shared("bad", {"when": object()}, "user", signals())
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "'bad'" in info.value.message and "$.when" in info.value.message
    assert bus.episodic.count() == 0
    assert bus.shared.keys() == []


def test_add_synthesis_is_gated_and_stores_the_pattern(bus: MemoryBus) -> None:
    evidence = bus.log_episode(EpisodeEntry(entry_type="action", content={"did": "x"}))
    pattern = SynthesizedPattern(
        pattern_type="routing", description="d", confidence=0.5, evidence_ids=[evidence]
    )
    decision = bus.add_synthesis(pattern, signals())
    assert decision.approved
    logged = writes(bus)[0]
    assert [p.id for p in bus.synthesis.search()] == [logged["pattern_id"]]
    assert logged["key"] == logged["pattern_id"]
    assert [e.id for e in bus.get_evidence_chain(logged["pattern_id"])] == [evidence]


def test_low_alignment_pattern_is_not_synthesised(bus: MemoryBus) -> None:
    pattern = SynthesizedPattern(pattern_type="routing", description="d")
    decision = bus.add_synthesis(pattern, signals(alignment_score=0.1))
    assert not decision.approved
    assert bus.synthesis.search() == []
    assert writes(bus)[0]["approved"] is False


def test_write_routes_a_synthesis_dict(bus: MemoryBus) -> None:
    decision = bus.write(
        WriteRequest(
            MemoryTarget.SYNTHESIS,
            "syn_fromdict",
            {"pattern_type": "t", "description": "d", "confidence": 0.4},
            signals(),
        )
    )
    assert decision.approved
    assert bus.synthesis.get_pattern("syn_fromdict").confidence == 0.4


def test_rollback_is_logged_and_restores_the_value(bus: MemoryBus) -> None:
    bus.write_to_shared("k", "one", "user", signals())
    bus.write_to_shared("k", "two", "user", signals())
    assert bus.rollback_shared("k", 1) == 3
    assert bus.shared.get("k").value == "one"
    assert writes(bus)[-1]["rollback_of"] == 1
    with pytest.raises(HRMError) as info:
        bus.rollback_shared("k", 9)
    assert info.value.code is ErrorCode.NOT_FOUND
    assert bus.shared.list_versions("k") == [1, 2, 3]


def test_expire_working_archives_summaries_first(bus: MemoryBus, clock: Any) -> None:
    bus.write_to_working("p", "draft", "text")
    clock.advance(hours=3)
    assert bus.expire_working() == 1
    (archived,) = bus.episodic.query(entry_type=WORKING_SET_EXPIRED)
    assert archived.problem_id == "p"
    assert "- draft: text" in archived.content["summary"]
    assert bus.working.stale() == []


def test_state_persists_across_bus_instances(home: HRMHome, clock: Any) -> None:
    with MemoryBus.open(home, clock=clock) as first:
        first.write_to_shared("k", [1, 2], "user", signals())
        first.write_to_working("p", "a", 1)
    with MemoryBus.open(home, clock=clock) as second:
        assert second.shared.get("k").value == [1, 2]
        assert second.working.get("p") is not None
        assert len(writes(second)) == 2


def test_buses_of_different_stacks_are_isolated(home: HRMHome, clock: Any) -> None:
    with (
        MemoryBus.open(home, "ADMIN", clock=clock) as admin,
        MemoryBus.open(home, "RESIDENT:DoPeJar", clock=clock) as resident,
    ):
        admin.write_to_shared("k", "admin", "user", signals())
        assert resident.shared.keys() == []
        assert resident.episodic.count() == 0


# ── several processes at once ─────────────────────────────────────────────


def _writer(root: str, worker: int, count: int, start: Any) -> None:
    start.wait()
    with MemoryBus.open(HRMHome(Path(root)), "ADMIN") as bus:
        for i in range(count):
            bus.write_to_shared(f"w{worker}", i, f"worker-{worker}", WriteSignals.trusted())
            bus.log_episode(EpisodeEntry(content={"worker": worker, "i": i}, tags=[f"w{worker}"]))
            bus.write_to_working(f"p{worker % 2}", f"w{worker}-{i}", i)


def test_several_processes_writing_at_once_lose_and_duplicate_nothing(home: HRMHome) -> None:
    workers, count = 4, 15
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    processes = [
        context.Process(target=_writer, args=(str(home.root), w, count, start))
        for w in range(workers)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    with MemoryBus.open(home) as bus:
        for w in range(workers):
            assert bus.shared.list_versions(f"w{w}") == list(range(1, count + 1))
            assert [r.value for r in bus.shared.history(f"w{w}")] == list(range(count))
            tagged = bus.episodic.query(tags=[f"w{w}"], limit=1000)
            assert sorted(e.content["i"] for e in tagged) == list(range(count))
        for p in range(2):
            working = bus.working.get(f"p{p}")
            assert working is not None
            assert len(working.partial_artifacts) == count * workers // 2
        total = bus.episodic.count()
        assert total == workers * count * 3
        assert bus.episodic.ledger.verify().ok
        ids = [r.data["id"] for r in bus.episodic.ledger.records() if r.kind == "episode"]
        assert len(ids) == len(set(ids)) == total
        assert bus.episodic.rebuild_index() == total
