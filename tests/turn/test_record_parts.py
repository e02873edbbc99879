"""Typed parts of the decision record are stored as the dictionaries the ledger always held."""

from __future__ import annotations

import json

from hrm.turn.records import (
    DecisionRecord,
    EscalationRecord,
    ForgetRequestRecord,
    HeldPreferenceRecord,
    PreferenceRecord,
    ProblemRequestRecord,
    jsonable,
)


def _record(**parts: object) -> DecisionRecord:
    return DecisionRecord(turn=1, session_id="s", agent_class="ADMIN", trace_id="t",
                          input_summary="hi", **parts)  # type: ignore[arg-type]


def test_a_part_reads_and_compares_as_its_stored_dictionary() -> None:
    pref = PreferenceRecord(preference_class="pref_explicit", matched_pattern="I prefer",
                            confidence=0.9)
    stored = {"class": "pref_explicit", "matched_pattern": "I prefer", "confidence": 0.9,
              "needs_confirmation": False}
    assert pref == stored and pref["class"] == "pref_explicit"
    assert pref.get("resolution") is None
    pref.resolution = "already canon"
    assert pref["resolution"] == "already canon" and list(pref)[-1] == "resolution"


def test_silent_and_held_preferences_keep_their_own_shapes() -> None:
    silent = PreferenceRecord(preference_class="pref_inferred_silent", silent=True,
                              not_a_preference="a question", confidence=0.9)
    assert silent.to_record()["not_a_preference"] == "a question"
    held = HeldPreferenceRecord(statement="I prefer tabs", key="preference.tabs",
                                resolution="confirmed")
    assert held.to_record() == {"statement": "I prefer tabs", "key": "preference.tabs",
                                "resolution": "confirmed"}


def test_a_problem_request_names_the_problem_only_once_one_matched() -> None:
    missed = ProblemRequestRecord(kind="resolve", ref="the webhook", clause="close the webhook",
                                  resolution="no open problem matches")
    assert "problem_id" not in missed
    hit = ProblemRequestRecord(kind="park", ref=None, clause="park it", problem_id="p1",
                               title="Offsite", was="active", resolution="paused")
    assert list(hit) == ["kind", "ref", "clause", "problem_id", "title", "was", "resolution"]


def test_the_stored_record_is_json_with_empty_parts_for_steps_not_reached() -> None:
    record = _record(
        escalation=EscalationRecord(signals={"urgency": 0.3}),
        memory_request=ForgetRequestRecord(forget="forget that", what=None, matched=["fact.x"]),
    )
    stored = record.fields()
    assert stored["altitude"] == {} and stored["selected"] == {} and stored["governance"] == {}
    assert stored["escalation"] == {"signals": {"urgency": 0.3}}
    assert stored["memory_request"] == {"forget": "forget that", "what": None, "keys": ["fact.x"]}
    assert stored["preference"] is None
    assert json.loads(json.dumps(record.to_dict())) == jsonable(stored)
