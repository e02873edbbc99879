"""Learning closes the loop at session end (issue 33 §3, D286): the session is analysed, the
Generalizer merges similar patterns, and Semantic Synthesis is filled with the learned patterns
and their evidence — visible in `hrm memory synthesis` and in /why."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.cli.why import explain
from hrm.demo import DemoClock
from hrm.errors import HRMError
from hrm.home import HRMHome
from hrm.learning import consolidation
from hrm.learning.consolidation import consolidate_session, pending_sessions, synthesis_id
from hrm.learning.patterns import Pattern
from hrm.memory.types import EpisodeEntry
from hrm.pipeline import HRM, SESSION_IDLE_MINUTES

QUIET = SESSION_IDLE_MINUTES + 1


def _clock() -> DemoClock:
    return DemoClock(start=datetime(2026, 11, 24, 22, 0, tzinfo=UTC), step=timedelta(minutes=1))


def _learn_a_pattern(h: HRM) -> None:
    for i in range(4):  # three successes make a pattern, the fourth strengthens it
        h.turn(f"How do I rename git branch number {i}?")


def _kinds(learning: list[dict[str, Any]]) -> list[str]:
    return [str(item.get("event_type")) for item in learning]


def test_a_new_session_consolidates_the_last_one_into_synthesis(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        _learn_a_pattern(h)
        first = h.session_id
        [learned] = h.stack.feedback.store.all_patterns()
        assert h.stack.bus.synthesis.search() == []  # nothing until the session ends
        clock.next_turn(QUIET)
        reply = h.turn("How do I delete a git tag?")
        synthesized = h.stack.bus.synthesis.get_pattern(synthesis_id(learned.id))
        chain = h.stack.bus.get_evidence_chain(synthesized.id)
        events = h.last_events()
    assert _kinds(reply.decision.learning)[:2] == ["session_consolidated", "synthesis_filled"]
    assert reply.decision.learning[0]["session_id"] == first
    assert "4 outcomes" in reply.decision.learning[0]["summary"]
    assert synthesized.evidence_ids == learned.evidence_ids
    assert [e.id for e in chain] == learned.evidence_ids
    assert all(e.entry_type == "learning_outcome" for e in chain)
    assert synthesized.recommended_action == {"strategy": "quick_answer"}
    assert "quick_answer (4 episodes)" in synthesized.description
    why = " ".join(text for _layer, text in explain(reply.decision.to_dict(), events))
    assert "session consolidated" in why and "synthesis filled" in why
    listed = CliRunner().invoke(app, ["memory", "synthesis", "list", "--json",
                                      "--home", str(home.root)])
    assert listed.exit_code == 0, listed.output
    assert [p["id"] for p in json.loads(listed.stdout)] == [synthesized.id]


def test_a_session_is_consolidated_once_whichever_process_sees_it_end(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        _learn_a_pattern(h)
        ended = h.session_id
    clock.next_turn(QUIET)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:  # a new process, new session
        assert _kinds(h.turn("hello").decision.learning)[0] == "session_consolidated"
        assert pending_sessions(h.stack.feedback, h.session_id) == []
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:  # the same session goes on
        assert "session_consolidated" not in _kinds(h.turn("thanks").decision.learning)
    assert ended != h.session_id


def test_a_failed_consolidation_is_noted_and_retried_never_the_turn_end(
    home: HRMHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        _learn_a_pattern(h)
        ended = h.session_id

    def broken(*args: object, **kwargs: object) -> object:
        raise HRMError.db_locked("memory.db")

    monkeypatch.setattr(consolidation, "consolidate_session", broken)
    clock.next_turn(QUIET)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        reply = h.turn("How do I delete a git tag?")
        assert reply.response and "session_consolidated" not in _kinds(reply.decision.learning)
        failed = [e for e in h.last_events() if e.get("kind") == "consolidation_failed"]
        assert failed and failed[0]["consolidated_session_id"] == ended
        assert pending_sessions(h.stack.feedback, h.session_id) == [ended]  # tried again later


def _episode(h: HRM, n: int) -> str:
    return h.stack.bus.log_episode(
        EpisodeEntry(entry_type="learning_outcome", content={"n": n}, tags=["learning"],
                     problem_id=None)
    )


def _pattern(h: HRM, horizon: str, evidence: list[str], confidence: float = 0.8) -> str:
    """A quick-answer pattern for simple code questions with this horizon (two of them differ
    in one field of four: similar enough for the Generalizer)."""
    return h.stack.feedback.store.add_pattern(Pattern(
        id="", pattern_type="strategy",
        input_signature={"complexity": "simple", "stakes": "low", "horizon": horizon,
                         "domain": ["code"]},
        recommended_action={"strategy": "quick_answer"}, confidence=confidence,
        evidence_ids=evidence, created_at=h._clock(),
    ))


def test_similar_patterns_are_merged_and_synthesis_keeps_one_with_both_evidence(
    home: HRMHome,
) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("hello")  # a session with an outcome
        session = h.session_id
        code = _pattern(h, "immediate", [_episode(h, 1), _episode(h, 2), _episode(h, 3)])
        ops = _pattern(h, "short_term", [_episode(h, 4), _episode(h, 5)])
        before = {p.id: p for p in h.stack.feedback.store.all_patterns()}
        done = consolidate_session(h.stack.feedback, h.stack.bus, session, clock=clock)
        store = h.stack.feedback.store
        after = {p.id: p for p in store.all_patterns()}
        synthesis = h.stack.bus.synthesis
        assert done.merged == ((code, (ops,)),)
        assert ops not in after and code in after
        merged = after[code]
        assert merged.input_signature["horizon"] == ["immediate", "short_term"]
        assert merged.evidence_ids == before[code].evidence_ids + before[ops].evidence_ids
        entry = synthesis.get_pattern(synthesis_id(code))
        assert entry.evidence_ids == merged.evidence_ids
        assert not synthesis.has(synthesis_id(ops))
        assert "patterns_merged" in _kinds(done.events)


def test_a_pattern_merged_away_after_it_was_synthesized_is_weakened_there(
    home: HRMHome,
) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("hello")
        session = h.session_id
        ops = _pattern(h, "short_term", [_episode(h, 1), _episode(h, 2)])
        consolidate_session(h.stack.feedback, h.stack.bus, session, clock=clock)
        assert h.stack.bus.synthesis.has(synthesis_id(ops))
        code = _pattern(h, "immediate", [_episode(h, 3), _episode(h, 4), _episode(h, 5)])
        done = consolidate_session(h.stack.feedback, h.stack.bus, session, clock=clock)
        synthesis = h.stack.bus.synthesis
        assert done.merged == ((code, (ops,)),)
        [weakening] = synthesis.weakenings(synthesis_id(ops))
        assert f"merged into {synthesis_id(code)}" in weakening.reason
        assert len(synthesis.get_pattern(synthesis_id(code)).evidence_ids) == 5


def test_the_gate_keeps_a_weak_pattern_out_and_one_episode_is_no_pattern(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("hello")
        weak = _pattern(h, "immediate", [_episode(h, 1), _episode(h, 2)], confidence=0.1)
        lone = h.stack.feedback.store.add_pattern(Pattern(
            id="", pattern_type="strategy", input_signature={"complexity": "complex"},
            recommended_action={"strategy": "decomposition"}, confidence=0.9,
            evidence_ids=[_episode(h, 3)], created_at=h._clock(),
        ))
        done = consolidate_session(h.stack.feedback, h.stack.bus, h.session_id, clock=clock)
        synthesis = h.stack.bus.synthesis
        assert [pattern_id for pattern_id, _reason in done.denied] == [weak]
        assert not synthesis.has(synthesis_id(weak)) and not synthesis.has(synthesis_id(lone))
