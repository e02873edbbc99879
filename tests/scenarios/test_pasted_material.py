"""Pasted code, tracebacks and logs are material for the conversation, not the person's words (D71).

Through `hrm chat`, a coding conversation canonized a code comment as a preference, read
``ValueError: urgent: …`` in a traceback as urgency, and queued a pasted log line as a problem
titled by its JSON.
"""

from __future__ import annotations

from hrm.home import HRMHome
from hrm.pipeline import HRM

TRACEBACK = """I'm getting this error when I run my tests, can you help?

Traceback (most recent call last):
  File "app/models.py", line 31, in validate
    raise ValueError("urgent: email must not be empty")
ValueError: urgent: email must not be empty"""

FUNCTION = """Here's the function:

def validate(self):
    # I prefer explicit checks over asserts
    if not self.email:
        raise ValueError("urgent: email must not be empty")
"""


def _preferences(h: HRM) -> dict[str, str]:
    return {k: v for k, v in h.stack.canon().items() if k.startswith("preference.")}


def test_a_pasted_traceback_opens_a_problem_titled_by_the_person_and_is_not_urgent(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(TRACEBACK)
        signals = result.decision.escalation["signals"]["deterministic"]
        assert signals["emergency_markers"] == signals["urgency_markers"] == []
        assert result.decision.arbitration["candidate"]["priority"] == 5  # not urgent's 6
        assert result.decision.problem["title"] == (
            "I'm getting this error when I run my tests, can you help?"
        )
        assert any(note.startswith("4 pasted line(s)") for note in result.decision.notes)


def test_a_comment_in_pasted_code_is_not_a_preference(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(TRACEBACK)
        result = h.turn(FUNCTION)
        assert result.decision.preference is None
        assert result.decision.writes == []
        assert _preferences(h) == {}
        # The paste goes with the problem it was pasted into; the model still sees all of it.
        assert result.decision.arbitration["disposition"] == "stay"
        # What the person says beside a paste is still heard.
        said = h.turn("I always want you to use pytest fixtures in examples.\n\nx = make_cart()")
        assert said.decision.preference["class"] == "pref_explicit"
        assert list(_preferences(h).values()) == [
            "I always want you to use pytest fixtures in examples"
        ]


def test_a_paste_with_no_words_continues_the_conversation(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        first = h.turn(TRACEBACK)
        pasted = h.turn('{"error": "connection refused", "host": "db.internal", "port": 5432}')
        assert pasted.decision.arbitration["disposition"] == "stay"
        assert pasted.decision.arbitration["candidate_problem_id"] == first.decision.problem["id"]
        assert len(h.focus.problem_registry.list()) == 1


def test_the_person_says_the_emergency_beside_a_log(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(TRACEBACK)
        result = h.turn(
            "Production is down and customers can't log in!\n"
            "2026-11-26 14:03:11 ERROR db: connection refused"
        )
        assert result.decision.arbitration["emergency"] is True
        assert result.decision.problem["title"].startswith("Production is down")


def test_a_problem_said_in_few_words_is_titled_with_the_pasted_error(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(
            "Ok fixed. Now this one is failing:\n\n```python\ndef test_total():\n"
            "    assert cart.total() == 3\n```\nAssertionError: assert 2.9999999 == 3"
        )
        assert result.decision.problem["title"] == (
            "This one is failing: AssertionError: assert 2.9999999 == 3"
        )
