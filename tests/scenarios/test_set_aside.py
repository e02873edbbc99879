""""Forget the offsite for now, …" turns to what follows (D81).

Planning an offsite, the person wrote "Forget the offsite for now, the payment webhook is
failing in production.": it became a problem titled by all of it, queued behind the offsite it
set aside; "Fixed it — …" opened another; and since both titles now held "offsite", "Let's get
back to the offsite" named no one problem, and every later message was asked about.
"""

from __future__ import annotations

from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM

OFFSITE = "I'm planning a team offsite for 12 people in March."


def test_setting_the_work_aside_switches_and_going_back_finds_it(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(OFFSITE)
        aside = h.turn("Forget the offsite for now, the payment webhook is failing in production.")
        detail = h.turn("It returns a 500 when Stripe retries.")
        fixed = h.turn("Fixed it — the signature check used the wrong secret.")
        back = h.turn("Let's get back to the offsite.")
        date = h.turn("Pick a date in the second week of March.")
        problems = {p.title: p.status for p in h.focus.problem_registry.list()}
    a = aside.decision.arbitration
    assert a["disposition"] == "switch" and a["explicit_request"]
    assert a["candidate_match"] == "set aside for new"
    assert aside.decision.problem is not None
    assert aside.decision.problem["title"] == "The payment webhook is failing in production."
    for turn in (detail, fixed):  # the webhook's own thread, a report on it included
        assert turn.decision.arbitration["disposition"] == "stay"
    assert back.decision.arbitration["disposition"] == "switch"
    assert back.decision.arbitration["candidate_match"] == "explicit switch request"
    assert date.decision.arbitration["disposition"] == "stay"
    assert date.decision.problem is not None and date.decision.problem["title"] == OFFSITE
    assert problems == {
        OFFSITE: ProblemStatus.ACTIVE,
        "The payment webhook is failing in production.": ProblemStatus.PAUSED,
    }


def test_setting_a_part_of_the_work_aside_keeps_the_work(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(OFFSITE)
        skipped = h.turn("Forget the venue for now, pick a date in the second week of March.")
        problems = h.focus.problem_registry.list()
    assert skipped.decision.arbitration["disposition"] == "stay"
    assert [p.title for p in problems] == [OFFSITE]
