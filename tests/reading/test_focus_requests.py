"""Reading a focus request: its span, its topic, and nothing from text that makes none."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reading.rules.focus import (
    FocusRequest,
    SetAside,
    read_focus_request,
    read_set_aside,
)


@pytest.mark.parametrize(
    ("text", "turns", "description"),
    [
        ("Let's focus on the billing migration script for the next 3 turns", 3,
         "the billing migration script"),
        ("For the next 2 turns, focus on the cache invalidation design.", 2,
         "the cache invalidation design"),
        ("let us work on the closet design for the bedroom", None,
         "the closet design for the bedroom"),
        ("We'll finish the v2.1 release notes. Then the changelog.", None,
         "the v2.1 release notes"),
        ("For the next 2 turns, help me debug the login flow.", 2,
         "help me debug the login flow"),
        ("Help me debug the login flow for the next 1 turn please", 1,
         "Help me debug the login flow please"),
        ("Let's stay on this for the next 4 turns", 4, "this"),
        ("I need you focused on the tax report for 4 turns", 4, "the tax report"),
        ("stick to the api docs for 2 more turns", 2, "the api docs"),
    ],
)
def test_reads_span_and_topic(text: str, turns: int | None, description: str) -> None:
    assert read_focus_request(text) == FocusRequest(turns, description)


def test_a_span_alone_names_nothing() -> None:
    assert read_focus_request("For the next 3 turns.") == FocusRequest(3, "")


@pytest.mark.parametrize(
    "text",
    ["Let's focus on ...", "let's ship ;;;", "How do I rename a git branch?", "Focus on the tests", "for the next release, add tests",
     "Let's plan the v2 launch", "", "I'm waiting for a reply from the vendor",
     "can you help me for two questions"],
)
def test_text_without_commitment_language_makes_no_request(text: str) -> None:
    assert read_focus_request(text) is None


def test_the_title_drops_the_article_and_capitalises() -> None:
    request = read_focus_request("Let's focus on the onboarding emails for the next 2 turns")
    assert request is not None and request.title == "Onboarding emails"


def test_a_long_topic_is_cut_after_a_whole_word_and_marked() -> None:
    request = read_focus_request("Let's focus on " + "migration " * 30)
    assert request is not None
    assert len(request.description) <= 80 and request.description.endswith("…")
    assert "migrati…" not in request.description


def test_only_the_head_of_an_enormous_input_is_read() -> None:
    assert read_focus_request("x" * 1_000_000 + " let's focus on the tail") is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_reads_as_no_request_or_a_well_formed_one(text: str) -> None:
    request = read_focus_request(text)
    if request is not None:
        assert len(request.description) <= 80 and request.description == request.description.strip()
        assert request.turns is None or 0 <= request.turns <= 99
        assert len(request.title) <= 80


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["the parser", "our billing export job", "release notes for v3"]),
    st.integers(min_value=1, max_value=99),
    st.sampled_from(["Let's focus on {t} for the next {n} turns",
                     "For the next {n} turns, let's work on {t}",
                     "for the next {n} turns, focus on {t}."]),
)
def test_span_and_topic_survive_any_phrasing(topic: str, turns: int, form: str) -> None:
    request = read_focus_request(form.format(t=topic, n=turns))
    assert request == FocusRequest(turns, topic)


@pytest.mark.parametrize(
    ("text", "aside", "rest"),
    [
        ("Forget the offsite for now, the payment webhook is failing in production.",
         "the offsite", "the payment webhook is failing in production."),
        ("Never mind the offsite for now — our production database is down!",
         "the offsite", "our production database is down!"),
        ("Never mind, the webhook is failing.", "", "the webhook is failing."),
        ("OK, let's park the launch for a bit: the CI is red.", "the launch", "the CI is red."),
        ("Put the offsite on hold. Our DB is down.", "the offsite", "Our DB is down."),
        ("Let's set the report aside and look at the outage", "the report",
         "look at the outage"),
        ("The offsite can wait, the webhook is failing.", "The offsite", "the webhook is failing."),
        ("Enough about the offsite. How do I rotate the Stripe secret?", "the offsite",
         "How do I rotate the Stripe secret?"),
        ("Forget that, the webhook is failing.", "that", "the webhook is failing."),
        ("Never mind.", "", ""),
    ],
)
def test_reads_what_is_set_aside_and_what_follows(text: str, aside: str, rest: str) -> None:
    assert read_set_aside(text) == SetAside(aside, rest)


@pytest.mark.parametrize(
    "text",
    [
        "Forget my address.",  # a request to forget (D77), not to set work aside
        "I can wait for the results.",
        "Put the config in the repo and commit it.",
        "Leave the logging as it is, and add tests.",
        "Wait, the build is failing.",
        "Write the migration step, dropping the legacy flag, in the auth service",
        "Can you reset the dataset for now?",
    ],
)
def test_text_that_sets_nothing_aside(text: str) -> None:
    assert read_set_aside(text) is None


@given(st.text(max_size=300))
@settings(max_examples=300)
def test_any_text_sets_nothing_aside_or_says_what_follows(text: str) -> None:
    found = read_set_aside("Never mind the offsite for now, " + text)
    assert found is not None and found.aside == "the offsite"
    assert found.rest == text.strip()
    plain = read_set_aside(text)
    assert plain is None or (plain.rest in text and plain.aside in text)
