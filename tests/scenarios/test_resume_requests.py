""""Where were we?" goes back to the thread an interruption left (D75).

In a thesis-writing conversation an urgent laptop crash took focus from the literature review;
after "Ok found it in the autosave folder, phew.", "Where were we?" stayed on the crash: it
has no words of a problem, so it continued the active one, and the person had to name the
review to get back to it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.demo import DemoClock
from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM, SESSION_IDLE_MINUTES
from hrm.reading.rules.focus import asks_to_resume, without_resume

REVIEW = "I need to finish the literature review chapter by Friday."
THEMES = "How should I organize the review - chronologically or thematically?"
CRASH = "Urgent: my laptop just crashed and I can't find my draft file!"
FOUND = "Ok found it in the autosave folder, phew."


def _interrupted(h: HRM) -> tuple[str, str]:
    """The review in focus, then the crash taking it; returns their problem ids."""
    review = h.turn(REVIEW).decision.arbitration["candidate_problem_id"]
    h.turn(THEMES)
    crash = h.turn(CRASH).decision
    assert crash.arbitration["disposition"] == "switch"
    h.turn(FOUND)
    return review, crash.arbitration["candidate_problem_id"]


def _status(h: HRM, problem_id: str) -> ProblemStatus:
    problem = h.focus.problem_registry.get(problem_id)
    assert problem is not None
    return problem.status


def test_where_were_we_goes_back_to_the_interrupted_problem_without_a_model_call(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        review, crash = _interrupted(h)
        result = h.turn("Where were we?")
        d = result.decision
        assert d.arbitration["disposition"] == "switch"
        assert d.arbitration["candidate_problem_id"] == review
        assert d.arbitration["explicit_request"] is True
        assert d.arbitration["candidate_match"].startswith("resume request: back to")
        assert result.action == "switch" and not d.execution  # hrm says where, no model
        assert result.response == f"Back to ‘{REVIEW}’ The last thing you said there: “{THEMES}”"
        assert _status(h, review) is ProblemStatus.ACTIVE
        assert _status(h, crash) is ProblemStatus.PAUSED  # not resolved: the person says so
        # the next question continues the review, not the crash
        follow = h.turn("What themes would you suggest?").decision.arbitration
        assert follow["candidate_problem_id"] == review


def test_a_resume_with_a_question_goes_to_the_model_under_the_earlier_problem(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        review, _ = _interrupted(h)
        result = h.turn("Anyway, back to what we were doing: which themes would you suggest?")
        assert result.decision.arbitration["candidate_problem_id"] == review
        assert result.decision.arbitration["disposition"] == "switch"
        assert result.action == "respond" and result.decision.execution


def test_with_no_earlier_thread_it_stays_on_the_active_problem(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        review = h.turn(REVIEW).decision.arbitration["candidate_problem_id"]
        result = h.turn("Where were we?")
        arbitration = result.decision.arbitration
        assert arbitration["candidate_problem_id"] == review
        assert arbitration["candidate_match"] == "resume request: the active problem"
        assert arbitration["disposition"] == "stay"
        assert result.action == "respond"  # the model recaps the thread it is on
        assert len(h.focus.problem_registry.list()) == 1


def test_a_resolved_earlier_problem_is_not_reopened(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        review, crash = _interrupted(h)
        h.focus.problem_registry.resolve(review)
        arbitration = h.turn("Where were we?").decision.arbitration
        assert arbitration["candidate_problem_id"] == crash
        assert arbitration["disposition"] == "stay"
        assert _status(h, review) is ProblemStatus.RESOLVED


def test_another_process_knows_the_earlier_thread(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        review, _ = _interrupted(h)
    with HRM.open(home, "ADMIN", "offline") as again:
        result = again.turn("So, where were we?")
        assert result.decision.arbitration["candidate_problem_id"] == review
        assert result.action == "switch"


def test_a_new_session_forgets_the_earlier_thread(home: HRMHome) -> None:
    clock = DemoClock(start=datetime(2026, 11, 26, 9, 0, tzinfo=UTC), step=timedelta(minutes=1))
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        _, crash = _interrupted(h)
        clock.next_turn(SESSION_IDLE_MINUTES + 1)
        # after a night, the thread in focus is where the person was
        arbitration = h.turn("Good morning, where were we?").decision.arbitration
        assert arbitration["candidate_problem_id"] == crash
        assert arbitration["candidate_match"] == "resume request: the active problem"


@pytest.mark.parametrize(
    ("text", "resumes"),
    [
        ("Where were we?", True),
        ("Ok found it, phew. Where were we?", True),
        ("Anyway, back to what we were doing.", True),
        ("Let's pick up where we left off", True),
        ("What were we talking about?", True),
        ("Let's get back to it!", True),
        ("back to the previous topic please", True),
        ("As I was saying, the table needs an index.", True),
        ("Where were we supposed to meet?", False),  # a question of its own
        ("Where were we with the methods?", False),  # names its topic: a mention
        ("I'll get back to it later", False),  # nothing now
        ("Let's go back to the literature review.", False),  # a switch naming it
        ("How do I resume a paused upload?", False),
        ("", False),
    ],
)
def test_what_asks_to_resume(text: str, resumes: bool) -> None:
    assert asks_to_resume(text) is resumes


def test_what_a_resume_request_says_besides() -> None:
    assert without_resume("Where were we?").strip(" ?") == ""
    assert "which themes" in without_resume("Anyway, back to it: which themes?")
    assert without_resume("Which themes?") == "Which themes?"


@given(st.text(max_size=300))
def test_reading_a_resume_request_never_fails(text: str) -> None:
    assert asks_to_resume(text) in (True, False)
    if not asks_to_resume(text):
        assert without_resume(text) == text


def test_after_a_resolve_it_goes_back_to_the_open_problem_the_talk_was_on(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        disk = h.turn("Our Postgres primary is running out of disk space, 92% used.")
        h.turn("Can we partition the audit_log table by month?")
        backup = h.turn("Also the nightly backup job failed again last night.").decision
        assert backup.arbitration["disposition"] == "queue"  # something wrong: its own problem
        h.turn("Which IAM permission does the backup job need?")  # joins the queued one
        h.resolve_problem(disk.decision.arbitration["candidate_problem_id"])
        result = h.turn("Where were we?")
        assert result.decision.arbitration["candidate_problem_id"] == (
            backup.arbitration["candidate_problem_id"]
        )
        assert result.response.startswith("Back to ‘The nightly backup job failed again")


def test_a_word_less_turn_keeps_the_thread_a_follow_up_continues(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        disk = h.turn("Our Postgres primary is running out of disk space, 92% used.")
        problem = disk.decision.arbitration["candidate_problem_id"]
        h.turn("Can we partition the audit_log table by month?")
        h.turn("ok")
        # "now" in a proposal sets the pace of the work at hand: no problem of its own (D78)
        result = h.turn("Let's do the partitioning now. Show me the SQL.")
        assert result.decision.arbitration["candidate_problem_id"] == problem
        assert len(h.focus.problem_registry.list()) == 1


def test_a_goodbye_opens_no_problem(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        first = h.turn("Our Postgres primary is running out of disk space, 92% used.")
        h.resolve_problem(first.decision.arbitration["candidate_problem_id"])
        result = h.turn("Thanks, that's all for today.")
        assert result.decision.arbitration["candidate_problem_id"] is None
        assert h.focus.problem_registry.get_active() is None
        h.turn("Our Postgres primary is running out of disk space again, 95% used.")
        goodbye = h.turn("Ok, I'm done for today. Thanks!").decision.arbitration
        assert goodbye["candidate_match"] == "a thanks or goodbye"
        assert goodbye["disposition"] == "stay"


def test_where_it_was_left_is_said_in_the_persons_words_without_the_paste(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'm writing a CSV importer for our orders table.")
        h.turn(
            "The import fails with this:\n\n"
            "Traceback (most recent call last):\n"
            '  File "importer.py", line 12, in <module>\n'
            "    rows = parse(path)\n"
            "ValueError: invalid literal for int() with base 10: 'N/A'"
        )
        h.turn(CRASH)
        result = h.turn("Where were we?")
        assert result.response.endswith("The last thing you said there: “The import fails with this:”")


def test_asking_to_take_up_queued_work_moves_there_and_decides_nothing(home: HRMHome) -> None:
    # D430: "can we talk about the newsletter for a bit" stayed on the shop, and "let's switch
    # to the newsletter" was kept as the newsletter's decision "switch to the newsletter".
    with HRM.open(home, "ADMIN", "offline") as h:
        shop = h.turn("Hi! I run a small online shop selling handmade candles").decision
        assert shop.problem is not None
        assert shop.problem.title == "I run a small online shop selling handmade candles"
        h.turn("also I want to plan the christmas newsletter")
        talk = h.turn("can we talk about the newsletter for a bit").decision
        assert talk.arbitration["disposition"] == "switch"
        assert talk.problem is not None and "newsletter" in talk.problem.title
        h.turn("back to the candle shop")
        moved = h.turn("let's switch to the newsletter").decision
        assert moved.arbitration["candidate_match"] == "explicit switch request"
        assert not [w for w in moved.writes if w.get("key") == "local_decisions"]
        decided = h.turn("let's switch to mailchimp for sending it").decision  # a decision
        assert [w["decision"] for w in decided.writes] == ["switch to mailchimp for sending it"]


def test_where_were_we_stays_when_a_queued_aside_never_took_focus(home: HRMHome) -> None:
    # D449: "jellyfin transcoding is super slow" was queued while a home server was set up;
    # two turns later, back on the server all along, "where were we?" went to the queued one.
    with HRM.open(home, "ADMIN", "offline") as h:
        server = h.turn("Setting up a home server on a raspberry pi 5").decision
        aside = h.turn("jellyfin transcoding is super slow").decision
        assert aside.arbitration["disposition"] == "queue"
        h.turn("the pi is not powerful enough for transcoding i guess")
        h.turn("ok decided: no transcoding, direct play only")
        where = h.turn("where were we?").decision
    assert where.arbitration["disposition"] == "stay"
    assert where.problem is not None and server.problem is not None
    assert where.problem.id == server.problem.id
