"""A topic queued while another problem is active keeps its follow-ups (D51).

In `hrm chat`: "How do I read a CSV file with pandas?" (active), then "Our nightly backup job
to S3 failed last night with an access denied error" (queued), then "Which IAM permission does
the backup job need?" was queued as a second, new problem beside the first; and every queued
input stamped progress on the CSV question, so it never went stale and hrm never asked to switch.
"""

from __future__ import annotations

from hrm.demo import DemoClock
from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM

CSV = "How do I read a CSV file with pandas?"
BACKUP = "Our nightly backup job to S3 failed last night with an access denied error"


def _titles(h: HRM, status: ProblemStatus) -> list[str]:
    return [p.title for p in h.focus.problem_registry.list(status)]


def test_a_follow_up_of_a_queued_topic_joins_its_problem(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(CSV)
        queued = h.turn(BACKUP).decision.arbitration
        assert queued["disposition"] == "queue" and queued["is_new_candidate"]
        follow = h.turn("Which IAM permission does the backup job need?").decision.arbitration
        assert follow["disposition"] == "queue"
        assert follow["candidate_problem_id"] == queued["candidate_problem_id"]
        assert not follow["is_new_candidate"]
        assert follow["candidate_match"] == "continues the last exchange"
        short = h.turn("And how do I test it?").decision.arbitration
        assert short["candidate_problem_id"] == queued["candidate_problem_id"]
        assert short["candidate_match"] == "continuation"
        assert _titles(h, ProblemStatus.ACTIVE) == [CSV]
        assert _titles(h, ProblemStatus.QUEUED) == [BACKUP]


def test_the_active_problem_goes_stale_while_the_person_talks_about_another(
    home: HRMHome,
) -> None:
    clock = DemoClock()
    with HRM.open(home, "ADMIN", "offline", clock=clock) as h:
        h.turn(CSV)
        csv = h.focus.problem_registry.get_active()
        assert csv is not None
        asked = None
        for text in (BACKUP, "Which IAM permission does the backup job need?",
                     "Should the backup job use a dedicated IAM role?",
                     "How do I rotate the backup job's IAM role credentials?",
                     "Can the backup job IAM role be limited to one bucket?"):
            clock.next_turn(8)
            result = h.turn(text)
            if result.asked:
                asked = result
                break
            registry = h.focus.problem_registry
            assert registry.get(csv.id).last_progress_at == csv.last_progress_at  # type: ignore[union-attr]
        # Some 25 minutes on the backup and none on the CSV question: hrm asks to switch.
        assert asked is not None
        arbitration = asked.decision.arbitration
        assert arbitration["disposition"] == "ask"
        assert arbitration["components"]["staleness"] >= 0.75
        assert "backup" in arbitration["candidate"]["title"]
        switched = h.turn("switch")
        assert switched.decision.arbitration["disposition"] == "switch"
        assert "backup" in h.focus.problem_registry.get_active().title  # type: ignore[union-attr]


def test_a_resolved_topic_is_not_continued(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(CSV)
        backup = h.turn(BACKUP).decision.arbitration["candidate_problem_id"]
        h.resolve_problem(backup)
        follow = h.turn("Which IAM permission does the backup job need?").decision.arbitration
        assert follow["candidate_problem_id"] != backup
        # A question with no open problem of its own goes with the conversation (D59).
        assert follow["candidate_match"] == "follow-up in the conversation"


def test_the_words_of_a_running_commitment_keep_an_input_on_its_problem(home: HRMHome) -> None:
    # The focus request narrows the active problem (D54); the next input shares one word with
    # it (D44 asks two) and none with the title, and the commitment keeps it there (D49).
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Let's design the caching layer for the product API")
        h.turn("For the next 3 turns, focus on the cache invalidation design")
        d = h.turn("What invalidation strategies fit a product catalogue?").decision
        assert d.arbitration["disposition"] == "stay"
        assert d.arbitration["candidate_match"] == "within the active commitment"
        assert d.commitment_after["turns_remaining"] == 2


def test_naming_a_queued_problem_after_ok_or_now_moves_to_it(home: HRMHome) -> None:
    """D460: "ok the invitations" attached a decision to the honeymoon still in focus."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("wedding planning: need to choose a photographer")
        h.turn("by the way i need to book flights for the honeymoon to japan")
        h.turn("also the invitations need to go out by may 1")
        h.turn("switch to honeymoon")
        moved = h.turn("ok the invitations")
        assert moved.decision.arbitration["disposition"] == "switch"
        decided = h.turn("digital it is")
        invitations = decided.decision.problem
        assert invitations is not None and invitations["title"].startswith("The invitations")
        assert list(h.stack.forgettable().values()) == ["go with digital"]
        assert h.turn("now the flights").decision.problem["title"].startswith("I need to book")  # type: ignore[index]
        stay = h.turn("ok the seating chart")  # names no open problem: no move
        assert stay.decision.arbitration["disposition"] != "switch"


def test_the_other_thing_is_the_one_open_problem_not_in_focus(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        cv = h.turn("I'm updating my CV for a data analyst job").decision.problem
        h.turn("park the CV")
        h.turn("wedding planning: need to choose a photographer")
        moved = h.turn("ok the other thing now")
        assert moved.decision.problem == cv


def test_the_other_one_said_alone_moves_to_the_one_other_open_problem(home: HRMHome) -> None:
    # D495: without a lead word ("ok", "now") "the other one" changed nothing.
    with HRM.open(home, "ADMIN", "offline") as h:
        cv = h.turn("I'm updating my CV for a data analyst job").decision.problem
        h.turn("park the CV")
        h.turn("wedding planning: need to choose a photographer")
        moved = h.turn("the other one")
        assert moved.decision.problem == cv


def test_the_other_one_among_several_asks_which_naming_them(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I need to migrate our CI from Jenkins to GitHub Actions.")
        h.turn("Quick question, how do I rotate the nginx logs daily?")
        h.turn("By the way, our staging TLS certificate expires on Friday.")
        h.turn("ok the certificate")
        h.turn("We are done with this one")
        asked = h.turn("the other one")
        statuses = {p.title: p.status for p in h.focus.problem_registry.list()}
    assert asked.asked and asked.response.startswith("Which one? Open now: ")
    assert "nginx logs" in asked.response and "Jenkins" in asked.response
    assert ProblemStatus.ACTIVE not in statuses.values()  # nothing moved
