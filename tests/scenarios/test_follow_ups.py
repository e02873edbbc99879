"""A follow-up stays with the problem it follows, even in words its title does not use."""

from __future__ import annotations

import pytest

from hrm.continuity import embeddings
from hrm.home import HRMHome
from hrm.pipeline import HRM

PLAN = "Let's plan the v2 launch of our billing service"
RISKS = "What are the risks of the billing launch?"
FOLLOW_UP = "Which risks matter most for the launch?"  # shares one word with the title


def _arbitration(result: object) -> tuple[str, str]:
    arbitration = result.decision.arbitration  # type: ignore[attr-defined]
    return arbitration["disposition"], arbitration["reason"]


def test_a_follow_up_in_the_last_exchanges_words_stays(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        assert _arbitration(h.turn(RISKS))[0] == "stay"  # shares "billing" and "launch"
        disposition, reason = _arbitration(h.turn(FOLLOW_UP))
        assert disposition == "stay"
        assert "continues the last exchange" in reason
        assert len(h.focus.problem_registry.list()) == 1
        # A question is the conversation's next move (D59); one the person sets apart is not.
        assert _arbitration(h.turn("How do I rename a git branch?"))[0] == "stay"
        assert _arbitration(h.turn("Unrelated: how do I rename a git branch?"))[0] == "queue"


def test_a_new_process_continues_the_same_exchange(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        h.turn(RISKS)
    with HRM.open(home, "ADMIN", "offline") as h:
        assert _arbitration(h.turn(FOLLOW_UP))[0] == "stay"


def test_after_a_queued_topic_its_words_do_not_pull_focus_to_the_active_problem(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        aside = h.turn("Separately, I need to rename a branch in the release repo").decision
        assert aside.arbitration["disposition"] == "queue"
        # Its follow-up belongs to the queued problem, not to the active one (D51).
        follow = h.turn("Does renaming the branch break the release tags?").decision.arbitration
        assert follow["disposition"] != "stay"
        assert follow["candidate_problem_id"] == aside.arbitration["candidate_problem_id"]


def test_a_question_about_what_the_person_committed_to_stays(home: HRMHome) -> None:
    # D49: one shared word with the last input and one with the title; it was queued as a
    # new problem in the middle of the focus the person had just asked for.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Let's design the caching layer for the product API")
        committed = h.turn("For the next 3 turns, focus on the cache invalidation design")
        assert committed.decision.commitment_after is not None
        disposition, reason = _arbitration(
            h.turn("What invalidation strategies fit a product catalogue?")
        )
        assert (disposition, reason) == (
            "stay", "Input relates to active problem (within the active commitment)"
        )
        assert len(h.focus.problem_registry.list()) == 1
        # Without a word of the commitment's, a passing topic stays too while the lease runs
        # (D56, which replaced "is still its own problem"); once it ends, it is queued again.
        # A task, not a question (a question stays anyway, D59).
        disposition, reason = _arbitration(h.turn("Write a script that squashes git commits"))
        assert disposition == "stay" and reason.startswith("Within the commitment")
        assert len(h.focus.problem_registry.list()) == 1
        h.turn("And which eviction policy suits it?")  # the lease's last turn
        assert _arbitration(h.turn("Write a script that renames stale git branches"))[0] == "queue"


def test_the_all_clear_after_an_emergency_stays_with_it(home: HRMHome) -> None:
    # "everything is fine now" read "now" as a deadline: the report was pressing, so it was
    # queued as a problem of its own instead of closing the loop on the outage.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        outage = h.turn("Production is down! Checkout returns 502 for every customer").decision
        assert outage.arbitration["disposition"] == "switch"
        d = h.turn("It was a bad config push, rolled back, everything is fine now").decision
        assert d.arbitration["disposition"] == "stay"
        assert d.arbitration["candidate_problem_id"] == outage.arbitration["candidate_problem_id"]
        assert len(h.focus.problem_registry.list()) == 2


def test_a_short_need_opened_with_also_is_its_own_problem(home: HRMHome) -> None:
    # "Also" made any short input a continuation, before the follow-up rules could see that
    # "I need to renew my passport" brings a need of its own (D62).
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I want to get back into running, I haven't run in two years")
        d = h.turn("Also, I need to renew my passport before June").decision
        assert d.arbitration["disposition"] == "queue" and d.arbitration["is_new_candidate"]
        then = h.turn("What documents do I need for that?").decision
        assert then.arbitration["candidate_problem_id"] == d.arbitration["candidate_problem_id"]
        more = h.turn("Also add the shoes to the list").decision  # a request: it continues
        assert not more.arbitration["is_new_candidate"]


def test_a_question_about_an_urgent_option_stays_with_the_work(home: HRMHome) -> None:
    """D457: "can I do an emergency appointment?" took focus through the emergency gate."""
    with HRM.open(home, "ADMIN", "offline") as h:
        first = h.turn("I need to renew my passport before the trip to canada")
        h.turn("the appointment system is full until june")
        asked = h.turn("can I do an emergency appointment?")
        assert asked.decision.arbitration["disposition"] == "stay"
        assert asked.decision.problem["id"] == first.decision.problem["id"]  # type: ignore[index]


@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_a_goodbye_the_sentence_model_reads_opens_nothing_and_moves_nothing(
    home: HRMHome,
) -> None:
    """D458: "thx thats all for today" was queued as a problem; "ok cya" switched to a queued
    question when nothing was in focus."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("how do I make sourdough starter?")
        bye = h.turn("thx thats all for today")
        assert bye.decision.arbitration["disposition"] == "stay"
        h.turn("unrelated: how do I rename a git branch?")
        h.turn("resolve the sourdough one")
        cya = h.turn("ok cya")
        assert cya.decision.arbitration["disposition"] != "switch"
        titles = {p.title: p.status.value for p in h.focus.problem_registry.list()}
    assert titles == {"How do I make sourdough starter?": "resolved",
                      "How do I rename a git branch?": "queued"}
