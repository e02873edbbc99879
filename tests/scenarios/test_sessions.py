"""Sessions through the `HRM` facade (D9, D37): a session is one stretch of activity.

It continues across processes while the stack is active, and ends after `SESSION_IDLE_MINUTES`
of quiet, in a process that stays open (`hrm chat` left overnight) as in a new one. Every record
of a session carries its id, whichever process wrote it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hrm.config import load_config
from hrm.demo import DemoClock
from hrm.home import HRMHome
from hrm.pipeline import HRM, SESSION_IDLE_MINUTES
from hrm.stacks.lifecycle import lifecycle_events
from hrm.storage.ledger import Ledger
from hrm.types import Stance

QUIET = SESSION_IDLE_MINUTES + 1


def _clock() -> DemoClock:
    return DemoClock(start=datetime(2026, 11, 24, 22, 0, tzinfo=UTC), step=timedelta(minutes=1))


def _session_ids(home: HRMHome, which: str = "decision") -> list[Any]:
    path = home.decision_ledger("ADMIN") if which == "decision" else home.execution_ledger("ADMIN")
    with Ledger(path) as ledger:
        return [r.data.get("session_id") for r in ledger.records()]


def _started(home: HRMHome) -> list[dict[str, Any]]:
    with Ledger(home.decision_ledger("ADMIN")) as ledger:
        return [r.data for r in ledger.records() if r.kind == "session_started"]


def test_a_process_left_open_starts_a_new_session_after_the_idle_limit(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        first = h.session_id
        h.turn("Let's plan the v2 launch of our billing service")
        assert h.turn("What should we check first?").decision.stance_after == "execution"
        clock.next_turn(SESSION_IDLE_MINUTES - 1)
        assert h.turn("And the rollback plan?").decision.session_id == first  # not idle yet
        clock.next_turn(QUIET)
        morning = h.turn("Good morning, where were we?")
    second = morning.decision.session_id
    assert second != first and h.session_id == second
    assert morning.decision.stance_before == Stance.SENSEMAKING.value  # a new session senses
    assert [s["previous_session_id"] for s in _started(home)] == [None, first]
    # every record after the roll-over carries the new id, in both of the stack's ledgers
    decisions = _session_ids(home)
    assert decisions[decisions.index(second):] == [second] * (len(decisions) - decisions.index(second))
    assert _session_ids(home, "execution")[-1] == second
    kinds = [e["kind"] for e in lifecycle_events(home, "ADMIN")]
    assert kinds == ["stack_created", "stack_recovered", "stack_teardown"]


def test_the_token_ceiling_is_renewed_when_a_long_lived_process_rolls_over(home: HRMHome) -> None:
    HRM.open(home, "ADMIN", "offline").close()
    config = replace(load_config(home).config, stack_token_budget=1500)
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", config=config, clock=clock) as h:
        codes = []
        for i in range(12):
            error = h.turn(f"How do I rename git branch number {i}?").decision.execution.get("error")
            codes.append(error["code"] if error else "ok")
        assert codes[0] == "ok" and codes[-1] == "budget_exhausted"
        clock.next_turn(QUIET)
        assert h.turn("How do I rename a git branch?").decision.execution.get("error") is None


def test_a_held_preference_does_not_outlive_its_session(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        held = h.turn("Dark mode seems better for late-night work")
        assert held.decision.preference["needs_confirmation"] is True
        clock.next_turn(QUIET)
        late = h.turn("yes")
        assert (late.decision.preference or {}).get("resolution") != "confirmed"
        assert not any(key.startswith("preference.dark-mode") for key in h.stack.canon())
    with Ledger(home.decision_ledger("ADMIN")) as ledger:
        dropped = [r.data for r in ledger.records() if r.kind == "preference_unconfirmed"]
    assert dropped and dropped[-1]["reason"] == "the session it was asked in ended unanswered"
    assert dropped[-1]["session_id"] == late.decision.session_id


def test_the_first_no_of_a_new_session_judges_no_answer_of_the_last(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("How do I rename a git branch?")
        clock.next_turn(QUIET)
        reply = h.turn("No, that's wrong")
        assert "negative_feedback" not in [e["event_type"] for e in reply.decision.learning]
        assert all(o.success for o in h.feedback.outcomes())


def test_a_held_preference_left_by_a_process_is_dropped_by_a_new_session_at_open(
    home: HRMHome,
) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("Dark mode seems better for late-night work")
    with HRM.open(home, "ADMIN", "offline", clock=clock, new_session=True) as h:
        late = h.turn("yes")
    assert (late.decision.preference or {}).get("resolution") != "confirmed"


def test_an_open_without_turns_begins_a_session_the_next_process_continues(
    home: HRMHome,
) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn("hello")
    clock.next_turn(QUIET)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as looked:  # e.g. `hrm status`
        begun = looked.session_id
    clock.next_turn(5)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        assert h.session_id == begun
        assert h.turn("where were we?").decision.session_id == begun
    assert len(_started(home)) == 2


def test_a_running_process_joins_the_session_another_process_started(home: HRMHome) -> None:
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as running:
        running.turn("Let's plan the v2 launch of our billing service")
        with HRM.open(home, "ADMIN", "offline", clock=clock, new_session=True) as other:
            other.turn("What should we check first?")
            started = other.session_id
        after = running.turn("And the rollback plan?")
        assert after.decision.session_id == started == running.session_id
        assert running.stack.session_id == started
    assert _session_ids(home, "execution")[-1] == started


def test_a_session_begun_by_an_open_without_turns_keeps_its_whole_ceiling(home: HRMHome) -> None:
    HRM.open(home, "ADMIN", "offline").close()
    config = replace(load_config(home).config, stack_token_budget=3000)
    clock = _clock()
    with HRM.open(home, "ADMIN", "offline", config=config, clock=clock) as h:
        for i in range(8):
            h.turn(f"How do I rename git branch number {i}?")
    clock.next_turn(QUIET)
    HRM.open(home, "ADMIN", "offline", config=config, clock=clock).close()  # begins a session
    with HRM.open(home, "ADMIN", "offline", config=config, clock=clock) as h:
        assert h.turn("How do I rename a git branch?").decision.execution.get("error") is None
