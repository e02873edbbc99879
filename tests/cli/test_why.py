"""`/why` in `hrm chat` reads the last decision as one sentence a layer; `/why json` is all of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.cli.why import explain
from hrm.demo import DEMO_PAUSES, DEMO_SCRIPT, DemoClock
from hrm.pipeline import HRM
from hrm.turn.runner import IN_THE_TURN_RECORD


@pytest.fixture(scope="module")
def demo_turns(
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The demo's fourteen decision records and events, as `hrm chat` reads them back."""
    clock = DemoClock()
    home = tmp_path_factory.mktemp("why") / "home"
    turns = []
    with HRM.open(home, "ADMIN", "offline", clock=clock, new_session=True) as h:
        for number, text in enumerate(DEMO_SCRIPT, start=1):
            clock.next_turn(DEMO_PAUSES.get(number))
            h.turn(text)
            decision = h.last_decision()
            assert decision is not None and decision["turn"] == number
            events = h.last_events()
            assert all(e["turn"] == number for e in events)
            # What only repeats the decision record is not an event record of its own (D331).
            assert not {e["kind"] for e in events} & IN_THE_TURN_RECORD
            turns.append((decision, events))
    assert sum(1 for _, events in turns if events) >= 5  # stance changes, commitments, …
    return turns


@pytest.fixture(scope="module")
def demo_decisions(
    demo_turns: list[tuple[dict[str, Any], list[dict[str, Any]]]],
) -> list[dict[str, Any]]:
    return [decision for decision, _ in demo_turns]


def _said(rows: list[tuple[str, str]], layer: str) -> str:
    return " | ".join(sentence for name, sentence in rows if name == layer)


def test_each_layer_says_what_it_decided_and_why(demo_decisions: list[dict[str, Any]]) -> None:
    commitment = explain(demo_decisions[4])  # "Write the migration step …", committed
    assert "stay: stayed on ‘Let's plan the v2 launch" in _said(commitment, "arbitration")
    assert _said(commitment, "commitment") == (
        "‘the billing migration script’: 3 → 2 of 3 turns left"
    )
    assert _said(commitment, "model").startswith("offline/hrm-offline-1 for respond: ok")
    assert "respond_direct (respond) scored" in _said(commitment, "action")
    asked = explain(demo_decisions[7])
    assert _said(asked, "arbitration").startswith("ask: asked whether to switch to ‘The invoice")
    queued = explain(demo_decisions[9])  # the multi-step task, queued as a new problem
    assert "(similar" not in _said(queued, "arbitration")  # a new problem says no match
    # The question after it is the conversation's next move: it goes where the task went (D59).
    again = explain(demo_decisions[10])
    assert "parser module, then update the tests…’ (follow-up in the conversation)" in _said(
        again, "arbitration"
    )
    assert "staleness 0.83" in " ".join(s for _, s in asked)
    assert _said(asked, "model") == ""  # an ask calls no model
    switched = explain(demo_decisions[8])
    assert _said(switched, "arbitration").startswith("switch: switched to ‘Production is down!’")
    # High stakes: agents ran and delivered, so the emergency's execution went on to
    # evaluation within the turn (issue 33); the record alone shows no net change.
    assert _said(switched, "stance") == ""
    assert "delegate_agents (delegate)" in _said(switched, "action")
    escalated = explain(demo_decisions[9])
    assert _said(escalated, "escalation").endswith(": escalated")
    learned = explain(demo_decisions[13])  # turn 14: the pattern learned at 13 chooses
    assert "(learned pattern pat_" in _said(learned, "strategy")
    assert _said(learned, "learning").startswith("pattern strengthened pat_")


def test_preferences_read_as_what_happened_to_them(demo_decisions: list[dict[str, Any]]) -> None:
    assert _said(explain(demo_decisions[1]), "write").startswith(
        "preference.i-prefer-concise-answers-with-code-examples → shared_reference: approved"
    )
    assert "held until you confirm" in _said(explain(demo_decisions[5]), "preference")
    confirmed = explain(demo_decisions[6])
    assert _said(confirmed, "preference").startswith("confirmed: ")
    assert _said(confirmed, "strategy") == ""  # hrm answered the "yes" itself (D50)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_part_of_a_record_can_be_missing(
    demo_decisions: list[dict[str, Any]], data: st.DataObject
) -> None:
    whole = data.draw(st.sampled_from(demo_decisions))
    kept = data.draw(st.sets(st.sampled_from(sorted(whole))))
    rows = explain({key: whole[key] for key in kept})
    assert all(isinstance(layer, str) and isinstance(text, str) for layer, text in rows)


def test_chat_why_reads_and_why_json_is_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HRM_FORCE_TTY", "1")  # the layers as a person's terminal shows them
    result = CliRunner().invoke(
        app,
        ["chat", "--home", str(tmp_path / "home"), "--provider", "offline"],
        input="/why\nHow do I rename a git branch?\n/why\n/why json\n/quit\n",
    )
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "No turn yet." in out
    assert "turn 1: why" in out and "arbitration  switch: switched to" in out
    assert '"trace_id": "hrm_' in out and '"arbitration": {' in out  # the JSON record


def test_the_turns_events_name_the_gate_a_stance_passed(
    demo_turns: list[tuple[dict[str, Any], list[dict[str, Any]]]],
) -> None:
    decision, events = demo_turns[8]
    assert _said(explain(decision, events), "stance") == (
        "evaluation → execution via the emergency gate (passed: emergency switch)"
        " | execution → evaluation via the evaluation gate (passed: work delivered)"
    )
    assert _said(explain(*demo_turns[2]), "stance") == ""  # no change, nothing said


def test_a_request_to_remember_reads_as_what_was_kept(tmp_path: Path) -> None:
    from hrm.pipeline import HRM

    with HRM.open(tmp_path / "home", "ADMIN", "offline") as h:
        first = h.turn("Remember that the staging DB is db2").decision.to_dict()
        again = h.turn("Remember that the staging DB is db2").decision.to_dict()
    assert _said(explain(first), "remember") == (
        "asked to remember: 'the staging DB is db2' as fact.the-staging-db"
    )
    assert _said(explain(again), "remember").startswith("already canon: ")


def test_a_request_to_forget_reads_as_what_was_taken_back(tmp_path: Path) -> None:
    from hrm.pipeline import HRM

    with HRM.open(tmp_path / "home", "ADMIN", "offline") as h:
        h.turn("I prefer short paragraphs.")
        forgot = h.turn("Forget that").decision.to_dict()
        nothing = h.turn("Forget what I said about tabs").decision.to_dict()
    assert _said(explain(forgot), "forget") == (
        "forgotten: 'Forget that' → preference.i-prefer-short-paragraphs"
    )
    assert _said(explain(forgot), "arbitration").startswith("stay: nothing in focus — ")
    assert _said(explain(nothing), "forget") == (
        "nothing kept matches: 'Forget what I said about tabs' → nothing kept"
    )


def test_a_request_about_a_problem_reads_as_what_was_done_to_it(tmp_path: Path) -> None:
    from hrm.pipeline import HRM

    with HRM.open(tmp_path / "home", "ADMIN", "offline") as h:
        h.turn("Our nightly backup job failed last night")
        parked = h.turn("Let's put the backup job on hold for now.").decision.to_dict()
        missed = h.turn("Mark the invoices problem as done").decision.to_dict()
    assert _said(explain(parked), "park") == (
        "‘Our nightly backup job failed last night’ (active → paused)"
        " — asked: \"Let's put the backup job on hold for now.\""
    )
    assert _said(explain(missed), "resolve") == (
        "nothing: no open problem matches — asked: 'Mark the invoices problem as done'"
    )
