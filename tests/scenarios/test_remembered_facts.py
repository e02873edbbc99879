""""Remember that …" keeps a fact in the canon, across processes (D73).

It used to go to the model as any other message: the fact was gone once the turn left the
recent exchanges.
"""

from __future__ import annotations

import pytest

from hrm.home import HRMHome
from hrm.pipeline import HRM

URL = "Remember that our API base URL is https://api.internal.example.com"


def _facts(h: HRM) -> dict[str, str]:
    return {k: v for k, v in h.stack.canon().items() if k.startswith("fact.")}


def test_a_fact_asked_to_be_remembered_is_canon_and_answered_by_hrm(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(URL)
        assert result.action == "remember"
        assert result.response == (
            "Noted as canon: “our API base URL is https://api.internal.example.com”."
        )
        assert result.decision.work_orders == []  # no model call
        assert result.decision.writes[0]["approved"] is True
        assert _facts(h) == {
            "fact.our-api-base-url": "our API base URL is https://api.internal.example.com"
        }
        assert h.focus.problem_registry.list() == []  # no problem titled "Remember that …"
    with HRM.open(home, "ADMIN", "offline") as again:  # another process, later
        answer = again.turn("What's the API base URL again?")
        assert "https://api.internal.example.com" in answer.response  # it was in the context


def test_said_again_it_is_already_canon_and_a_new_value_is_a_new_version(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(URL)
        same = h.turn(URL)
        assert same.response.startswith("Already canon")
        assert same.decision.writes == []
        h.turn("Remember that our API base URL is https://api-v2.internal.example.com")
        assert _facts(h)["fact.our-api-base-url"].endswith("api-v2.internal.example.com")
        history = h.stack.bus.shared.history("fact.our-api-base-url")
        assert len(history) == 2  # the earlier value is kept, for rollback


def test_the_rest_of_the_message_is_answered_and_arbitrated_without_the_request(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("Keep in mind we deploy on Fridays only. How do I add a column to orders?")
        assert result.action == "respond"
        assert "Noted as canon: “we deploy on Fridays only”." in result.response
        assert result.decision.problem["title"] == "How do I add a column to orders?"
        assert "the request to remember was left out of arbitration" in result.decision.notes


def test_a_question_about_a_memory_is_no_request(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("Remember when we fixed the login bug?")
        assert result.decision.memory_request is None
        assert _facts(h) == {}


def test_a_preference_asked_to_be_kept_is_the_preference_said_plainly(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        kept = h.turn("Keep in mind I prefer tabs over spaces.")
        assert kept.response == "Noted as canon: “I prefer tabs over spaces”."
        assert kept.decision.memory_request is None  # the preference's, not a fact
        assert h.turn("I prefer tabs over spaces").response.startswith("Already canon")
        assert _facts(h) == {}
        asked = h.turn("Remember that I hate long meetings. How do I book a room?")
        assert asked.decision.problem["title"] == "How do I book a room?"


def test_a_fact_that_contradicts_the_canon_is_kept_for_the_problem_only(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer tabs for Python")
        result = h.turn("Remember that we use spaces for Python, not tabs")
        assert result.decision.writes[0]["target"] == "working_set"
        assert result.response.endswith(
            "This conflicts with “I prefer tabs for Python”, so I kept “we use spaces for "
            "Python, not tabs” for now only."  # no problem in focus to keep it for
        )
        assert _facts(h) == {}


def test_a_new_value_of_a_kept_fact_is_its_next_version_in_a_new_process_too(
    home: HRMHome,
) -> None:
    # The README's example: "Remember that the staging DB is db3" after "… is db2" was kept
    # "for this problem only" as a contradiction of itself (D378).
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Remember that the staging DB is db2")
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("Remember that the staging DB is db3")
        assert result.response == "Noted as canon: “the staging DB is db3”."
        assert _facts(h) == {"fact.the-staging-db": "the staging DB is db3"}
        versions = [r.value for r in h.stack.bus.shared.history("fact.the-staging-db")]
        assert versions == ["the staging DB is db2", "the staging DB is db3"]


@pytest.mark.parametrize(
    ("first", "then", "key"),
    [
        ("Remember that my address is 12 Rua Augusta, Lisbon",
         "Remember that my address is 5 Baker Street, London", "fact.my-address"),
        ("Remember that my boss is Carla Mendes", "Remember that my boss is Tom Weiss",
         "fact.my-boss"),
        # after a preposition of time or place (D468)
        ("Remember that the team meeting is on Monday",
         "Remember that the team meeting is on Tuesday", "fact.the-team-meeting"),
        ("Remember that the standup is at 9:30", "Remember that the standup is at 10:15",
         "fact.the-standup"),
        # a change said as a move (D473)
        ("Remember that the standup is at 9:30",
         "Update: the standup moved to 10:15, remember that", "fact.the-standup"),
        ("Remember that the dentist appointment is on Tuesday",
         "remember the dentist appointment got moved to Thursday",
         "fact.the-dentist-appointment"),
    ],
)
def test_a_new_value_of_several_words_is_a_new_version_too(
    home: HRMHome, first: str, then: str, key: str
) -> None:
    """D464: a changed address was kept as a second fact that contradicted the first."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(first)
        h.turn(then)
        assert list(_facts(h)) == [key]
        assert len(h.stack.bus.shared.history(key)) == 2


def test_a_fact_beside_a_preference_and_a_question_is_kept_too(home: HRMHome) -> None:
    """D470: the fact was dropped without a word when the message also stated a preference."""
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(
            "Remember that our prod database is db-prod-7. Also, from now on answer in bullet "
            "points. And can you explain what a connection pool is?"
        )
        kept = sorted(v for v in h.stack.canon().values() if isinstance(v, str))
        titles = [p.title for p in h.focus.problem_registry.list()]
    assert kept == ["From now on answer in bullet points", "our prod database is db-prod-7"]
    assert titles == ["Can you explain what a connection pool is?"]
    assert "Noted as canon: “our prod database is db-prod-7”" in result.response


def test_a_question_in_other_words_than_the_fact_still_shows_it_to_the_model(
    home: HRMHome,
) -> None:
    """D474: "what did I tell you about my diet?" shares no word with the allergy it asks for."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Remember that I'm allergic to peanuts and I don't eat pork")
        asked = h.turn("what did I tell you about my diet?")
    shown = [item["key"] for item in asked.decision.attention_state["retrieved"]]
    assert "fact.i-m-allergic-to-peanuts-and-i-don-t-eat-pork" in shown


def test_the_model_is_shown_what_a_fact_says_not_a_key_holding_its_old_value(
    home: HRMHome,
) -> None:
    """D500: after a correction, "fact.the-release-is-on-the-14th: the release is on the 21st"
    told the model both dates."""
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Remember that the release is on the 14th")
        h.turn("sorry, the 21st not the 14th")
        asked = h.turn("when is the release?")
    # the offline model quotes the context lines it was given
    assert "21st" in asked.response and "14th" not in asked.response
