"""Arbitration asked "switch or queue?": the answer is acted on, in this process or the next (D43)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.demo import DEMO_PAUSES, DEMO_SCRIPT, DemoClock
from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.reader import read
from hrm.reading.types import IntentKind, ReadingContext
from hrm.storage.ledger import Ledger


def read_answer(text: str) -> str | None:
    """What `text` answers to "switch or queue?", as the reading stage reads it."""
    kinds = {IntentKind.SWITCH: "switch", IntentKind.QUEUE: "queue"}
    found = read(text, ReadingContext(pending="switch")).intents
    return next((kinds[i.kind] for i in found if i.kind in kinds), None)

ASKED = DEMO_SCRIPT[7]  # "The invoice totals look wrong in the finance dashboard"


def _asked(home: HRMHome, clock: DemoClock) -> tuple[str, str]:
    """Run the demo up to its eighth turn, which asks; (candidate id, active id) then."""
    with HRM.open(home, "ADMIN", "offline", clock=clock, new_session=True) as h:
        for number, text in enumerate(DEMO_SCRIPT[:8], start=1):
            clock.next_turn(DEMO_PAUSES.get(number))
            result = h.turn(text)
        assert result.asked and "Say “switch” or “queue”" in result.response
        arbitration = result.decision.arbitration
        return arbitration["candidate_problem_id"], arbitration["active_problem_id"]


def test_switch_moves_focus_and_answers_the_question_that_was_asked(home: HRMHome) -> None:
    clock = DemoClock()
    candidate, active = _asked(home, clock)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:  # a new process answers
        clock.next_turn()
        reply = h.turn("switch")
        registry = h.focus.problem_registry
        assert registry.get_active().id == candidate
        assert registry.get(active).status is ProblemStatus.PAUSED
    arbitration = reply.decision.arbitration
    assert arbitration["disposition"] == "switch" and arbitration["explicit_request"] is True
    assert arbitration["reason"] == "The person chose to switch when asked"
    assert reply.action != "ask_user" and not reply.asked
    assert "The invoice totals look wrong" in reply.response  # the offline model quotes it
    assert reply.decision.input_summary == "switch"  # the record keeps what was typed


def test_queue_keeps_focus_and_says_what_waits(home: HRMHome) -> None:
    clock = DemoClock()
    candidate, active = _asked(home, clock)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        clock.next_turn()
        reply = h.turn("Not now, queue it")
        registry = h.focus.problem_registry
        assert registry.get_active().id == active
        assert registry.get(candidate).status is ProblemStatus.QUEUED
    assert reply.action == "queue"
    assert reply.response.startswith("Queued ‘The invoice totals look wrong")
    assert "staying on" in reply.response
    assert reply.decision.arbitration["disposition"] == "queue"


def test_an_input_that_answers_neither_lets_the_question_go(home: HRMHome) -> None:
    clock = DemoClock()
    _, active = _asked(home, clock)
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        clock.next_turn()
        title = h.focus.problem_registry.get(active).title
        moved_on = h.turn(f"More on {title}: what comes next?")
        assert any("went unanswered" in note for note in moved_on.decision.notes)
        assert not moved_on.asked
        clock.next_turn()
        later = h.turn("switch")  # nothing is asked any more: an input like any other
    assert later.decision.arbitration["reason"] != "The person chose to switch when asked"


def test_a_new_session_forgets_the_question(home: HRMHome) -> None:
    clock = DemoClock()
    candidate, _ = _asked(home, clock)
    clock.next_turn(45)  # past the 30 idle minutes that end a session
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        reply = h.turn("switch")
    assert reply.decision.arbitration["reason"] != "The person chose to switch when asked"
    with Ledger(home.decision_ledger("ADMIN")) as ledger:
        dropped = [r.data for r in ledger.records() if r.kind == "switch_unanswered"]
    assert dropped[-1]["problem_id"] == candidate
    assert dropped[-1]["reason"] == "the session it was asked in ended unanswered"


@pytest.mark.parametrize(
    ("text", "choice"),
    [("switch", "switch"), ("Yes, switch to it", "switch"), ("ok", "switch"), ("now", "switch"),
     ("queue", "queue"), ("Later", "queue"), ("no", "queue"), ("not now", "queue"),
     ("keep going", "queue"), ("How do I rename a branch?", None), ("nowhere to go", None)],
)
def test_answers_are_read_from_their_first_words(text: str, choice: str | None) -> None:
    assert read_answer(text) == choice


@given(st.text(min_size=201))
def test_a_long_input_is_never_an_answer(text: str) -> None:
    assert read_answer(text) is None
