"""A focus request moves focus to what it names, and the commitment lands there (D54).

In the demo, "Let's focus on the billing migration script for the next 3 turns" under "Let's
plan the v2 launch of our billing service" was queued as a problem of its own *and* made a
commitment on the active problem: the person's one request read two ways at once.
"""

from __future__ import annotations

from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM

LAUNCH = "Let's plan the v2 launch of our billing service"
INVOICES = "The invoice totals look wrong in the March export"


def _titles(h: HRM, status: ProblemStatus) -> list[str]:
    return [p.title for p in h.focus.problem_registry.list(status)]


def test_a_request_that_narrows_the_active_problem_stays_and_commits_it(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(LAUNCH)
        d = h.turn("Let's focus on the billing migration script for the next 3 turns").decision
        assert d.arbitration["disposition"] == "stay"
        assert d.arbitration["candidate_match"] == "focus request within the active problem"
        assert d.commitment_after["description"] == "the billing migration script"
        assert d.commitment_after["problem_id"] == d.arbitration["active_problem_id"]
        assert _titles(h, ProblemStatus.QUEUED) == []  # not also queued as a problem


def test_a_request_on_a_new_topic_opens_it_switches_and_commits_it(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        launch = h.turn(LAUNCH).decision.arbitration["candidate_problem_id"]
        d = h.turn("Let's focus on the onboarding emails for the next 2 turns").decision
        arbitration = d.arbitration
        assert arbitration["disposition"] == "switch"  # whatever the score: the person asked
        assert arbitration["preempt_score"] < 0.55
        assert arbitration["explicit_request"] and arbitration["is_new_candidate"]
        assert arbitration["candidate_match"] == "focus request on a new topic"
        assert _titles(h, ProblemStatus.ACTIVE) == ["Onboarding emails"]
        assert [p.id for p in h.focus.problem_registry.list(ProblemStatus.PAUSED)] == [launch]
        assert d.commitment_after["problem_id"] == arbitration["candidate_problem_id"]
        assert d.commitment_after["turns_total"] == 2
        # the next input in the commitment's words stays with it (D49)
        follow = h.turn("Draft the welcome email copy").decision
        assert follow.arbitration["disposition"] == "stay"
        assert follow.commitment_after["turns_remaining"] == 1


def test_a_request_naming_a_queued_problem_switches_to_it(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(LAUNCH)
        queued = h.turn(INVOICES).decision.arbitration
        assert queued["disposition"] == "queue"
        d = h.turn("Let's focus on the invoice totals").decision
        assert d.arbitration["disposition"] == "switch"
        assert d.arbitration["candidate_problem_id"] == queued["candidate_problem_id"]
        assert not d.arbitration["is_new_candidate"]
        assert d.arbitration["candidate_match"] == "focus request naming it"
        assert _titles(h, ProblemStatus.ACTIVE) == [INVOICES]
        assert d.commitment_after["problem_id"] == queued["candidate_problem_id"]
        assert d.commitment_after["turns_total"] == 3  # no span said: the default


def test_a_request_that_names_nothing_commits_the_active_problem_by_its_title(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(LAUNCH)
        d = h.turn("Let's stay on this for the next 4 turns").decision
        assert d.arbitration["disposition"] == "stay"
        assert d.arbitration["candidate_match"] == "focus request on the active problem"
        assert d.commitment_after["description"] == LAUNCH
        assert d.commitment_after["turns_total"] == 4


def test_a_request_with_no_problem_open_is_titled_by_its_topic(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        d = h.turn("For the next 2 turns, help me debug the login flow.").decision
        assert d.arbitration["disposition"] == "switch"
        assert _titles(h, ProblemStatus.ACTIVE) == ["Help me debug the login flow"]
        assert d.commitment_after["turns_total"] == 2


def test_a_new_focus_abandons_the_commitment_on_the_problem_it_leaves(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(LAUNCH)
        first = h.turn("Let's focus on the billing migration script for the next 5 turns")
        d = h.turn("Let's focus on the onboarding emails for the next 2 turns").decision
        events = {e["kind"]: e for e in h.last_events()}
        assert events["commitment_abandoned"]["id"] == first.decision.commitment_after["id"]
        assert d.commitment_after["description"] == "the onboarding emails"


def test_an_emergency_still_wins_over_a_focus_request(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(LAUNCH)
        d = h.turn("Production is down! Let's focus on the payment gateway outage").decision
        assert d.arbitration["disposition"] == "switch" and d.arbitration["emergency"]


def test_a_span_alone_commits_the_active_problem(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(LAUNCH)
        d = h.turn("For the next 2 turns.").decision
        assert d.arbitration["disposition"] == "stay"
        assert d.commitment_after["description"] == LAUNCH
        assert _titles(h, ProblemStatus.QUEUED) == []
