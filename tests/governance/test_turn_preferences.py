"""The preference steps of a turn: the statement kept, its key, and a held preference settled."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hrm.records import DecisionRecord
from hrm.turn_preferences import preference_key, preference_statement, resolve_pending
from hrm.turn_state import TurnState


def test_the_sentence_that_states_the_preference_is_kept() -> None:
    text = "Thanks for that. I prefer short answers with examples. Now, about the cache?"
    assert preference_statement(text) == "I prefer short answers with examples"
    assert preference_key("I prefer short answers!") == "preference.i-prefer-short-answers"


@given(st.text(max_size=5000))
def test_any_input_gives_a_bounded_statement_and_a_well_formed_key(text: str) -> None:
    statement = preference_statement(text)
    assert len(statement) <= 300
    assert re.fullmatch(r"preference\.[a-z0-9-]{1,48}", preference_key(statement))


class _Stack:
    def __init__(self) -> None:
        self.writes: list[tuple[str, str, bool]] = []

    def write_preference(self, statement: str, key: str, *, confirmed: bool) -> dict[str, Any]:
        self.writes.append((statement, key, confirmed))
        return {"key": key, "approved": True, "target": "shared_reference"}


def _record() -> DecisionRecord:
    return DecisionRecord(turn=2, session_id="S", agent_class="ADMIN", trace_id="t",
                          input_summary="")


def test_yes_canonizes_no_drops_and_anything_else_lets_it_go_unconfirmed() -> None:
    pending = {"statement": "I like dark mode", "key": "preference.i-like-dark-mode"}
    events: list[str] = []

    def event(kind: str, **_: Any) -> None:
        events.append(kind)

    stack, state = _Stack(), TurnState(pending_preference=dict(pending))
    record = _record()
    assert resolve_pending(stack, state, "What about the cache?", record, event) is None
    assert state.pending_preference is None and not stack.writes
    assert "went unanswered" in record.notes[0]
    # a later "yes" (to something else) has nothing to confirm
    assert resolve_pending(stack, state, "yes", _record(), event) is None and not stack.writes
    assert events == ["preference_unconfirmed"]
    events.clear()
    state.pending_preference = dict(pending)
    record = _record()
    assert "Remembered" in (resolve_pending(stack, state, "yes please", record, event) or "")
    assert stack.writes == [("I like dark mode", "preference.i-like-dark-mode", True)]
    assert record.preference == {**pending, "resolution": "confirmed"}
    assert state.pending_preference is None
    state.pending_preference = dict(pending)
    assert resolve_pending(stack, state, "no", _record(), event) is not None
    assert state.pending_preference is None and len(stack.writes) == 1
    assert events == ["preference_confirmed", "preference_declined"]
