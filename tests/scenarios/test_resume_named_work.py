""""Resume the garden project" when nothing open is the garden project (D410).

A person who believed an earlier conversation was kept said "resume the garden project" to a
fresh home: it was answered as ordinary text and opened a problem titled "Resume the garden
project" — a missed command that became a problem, with nothing said.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.continuity import embeddings
from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.reader import read
from hrm.reading.rules.focus import read_focus_intents
from hrm.reading.types import IntentKind

GARDEN = "Help me plan the vegetable garden layout for the back yard."


def _open_titles(h: HRM) -> list[str]:
    return [p.title for p in h.focus.problem_registry.list() if p.status is not ProblemStatus.RESOLVED]


def test_nothing_named_opens_nothing_and_asks_whether_to_start_it(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("resume the garden project")
        assert result.asked and not result.decision.execution  # hrm asks; no model call
        assert result.response.startswith("Nothing open is called “garden project”")
        assert "Should I start ‘Garden project’ as a new problem? (yes/no)" in result.response
        assert _open_titles(h) == []
        started = h.turn("yes")
        assert started.response == "Started ‘Garden project’; it is in focus now."
        active = h.focus.problem_registry.get_active()
        assert active is not None and active.title == "Garden project"
        # the next question is about the problem it started
        follow = h.turn("What should I plant in March?").decision.arbitration
        assert follow["candidate_problem_id"] == active.id


def test_a_no_starts_nothing_and_stays_where_it_was(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        garden = h.turn(GARDEN).decision.arbitration["candidate_problem_id"]
        asked = h.turn("Let's get back to the wedding speech.")
        assert "Nothing open is called “wedding speech”" in asked.response
        assert "Open now: ‘Help me plan the vegetable garden layout" in asked.response
        declined = h.turn("no")
        assert declined.response == "Understood — nothing was started."
        assert [p.id for p in h.focus.problem_registry.list()] == [garden]
        active = h.focus.problem_registry.get_active()
        assert active is not None and active.id == garden


def test_a_named_open_problem_is_switched_to_without_a_question(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        garden = h.turn(GARDEN).decision.arbitration["candidate_problem_id"]
        h.turn("Unrelated: my tax return is due, which forms do I need?")
        result = h.turn("ok back to the garden")
        assert not result.asked
        assert result.decision.arbitration["candidate_problem_id"] == garden
        assert result.decision.arbitration["explicit_request"] is True


def test_with_more_said_the_rest_is_answered_and_a_note_says_nothing_matched(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("Back to the wedding speech: how long should a toast be?")
        assert not result.asked and result.decision.execution  # the question is answered
        assert any("Nothing open is called “wedding speech”" in n for n in result.decision.notes)
        assert "• Nothing open is called “wedding speech”, so this is taken as new work." in (
            result.response
        )


def test_the_question_goes_unanswered_when_the_person_moves_on(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("resume the garden project")
        h.turn("What is a B-tree?")
        assert _open_titles(h) == ["What is a B-tree?"]
        again = h.turn("yes")  # no question is pending any more: nothing is started
        assert "Garden project" not in _open_titles(h)
        assert again.response != "Started ‘Garden project’; it is in focus now."


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("resume the garden project", "garden project"),
        ("Let's get back to the wedding speech.", "wedding speech"),
        ("ok back to the newsletter", "newsletter"),
        ("can we go back to the login problem please", "login"),
        ("Going back to the tax return, which forms?", "tax return"),
        ("Sorry. Back to the offsite planning", "offsite planning"),
        ("back to square one, the tests fail", None),  # an idiom, not work
        ("Back to the office tomorrow, what should I pack?", None),
        ("I'll get back to the invoice later", None),  # nothing now
        ("go back to the previous version of the function", None),  # a request about the work
        ("where were we?", None),  # names nothing: D75
        ("How do I resume a paused upload?", None),
    ],
)
def test_what_names_work_to_go_back_to(text: str, topic: str | None) -> None:
    named = [i for i in read_focus_intents(text) if i.kind is IntentKind.RESUME and i.slots.topic]
    assert [i.slots.topic for i in named] == ([topic] if topic else [])
    cues = read(text).cues
    assert cues.resume_to == (topic or "")


def test_only_the_move_said_alone_is_the_whole_message() -> None:
    assert read("resume the garden project").cues.resume_only is True
    assert read("Back to the garden: what should I plant?").cues.resume_only is False


@given(st.text(max_size=400))
def test_any_text_names_work_with_a_span_inside_it(text: str) -> None:
    for intent in read_focus_intents(text):
        assert 0 <= intent.span[0] < intent.span[1] <= len(text)


@pytest.mark.embeddings
@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_a_request_about_the_work_in_a_moves_words_is_answered_without_a_note(
    home: HRMHome,
) -> None:
    # The sentence model reads "go back to the previous version of the function" as a move
    # back (0.86); in a coding session it is a request about the work: no question, no note.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm refactoring the parser module of our compiler")
        result = h.turn("go back to the previous version of the function")
    assert not result.asked and result.decision.execution
    assert not any("Nothing open" in note for note in result.decision.notes)
