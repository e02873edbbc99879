"""Requests to remember a fact (D73)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reading.reader import read
from hrm.reading.rules.cues import without_trailing_aside
from hrm.reading.rules.memory import (
    fact_key,
    read_memory_request,
    without_discourse_lead,
    without_keep_lead,
)
from hrm.reading.types import IntentKind


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Remember that our API base URL is https://api.internal.example.com",
         "our API base URL is https://api.internal.example.com"),
        ("Please remember: staging runs on db2.example.com.", "staging runs on db2.example.com"),
        ("Keep in mind we deploy on Fridays only.", "we deploy on Fridays only"),
        ("Can you remember that the on-call rota lives in Notion?",
         "the on-call rota lives in Notion"),
        ("For future reference, the CI token is rotated monthly.",
         "the CI token is rotated monthly"),
        ("Don't forget to run the linter before committing.",
         "run the linter before committing"),
        ("Thanks. Also, remember that the prod database is read-only on weekends. How do I add "
         "an index?", "the prod database is read-only on weekends"),
        ("Make a note that the invoices table has no primary key",
         "the invoices table has no primary key"),
        # A verb of keeping with "this", then the fact.
        ("keep this in mind, we support python 3.9 and above only",
         "we support python 3.9 and above only"),
        ("store this: the feature flag service is LaunchDarkly",
         "the feature flag service is LaunchDarkly"),
        ("write this down - our sprint ends on thursdays", "our sprint ends on thursdays"),
        ("save for later: the design doc is ARCH-12", "the design doc is ARCH-12"),
        ("remember, the deploy freeze starts friday", "the deploy freeze starts friday"),
        ("you should know that our api rate limit is 100 rps", "our api rate limit is 100 rps"),
        # The request after the fact.
        ("we use tabs in this repo, remember that going forward", "we use tabs in this repo"),
        ("fyi our prod db is postgres 15, please keep that in mind", "our prod db is postgres 15"),
        ("remember to use UTC in this project", "use UTC in this project"),
        # A lead in any words the fact cues hold (data/cues.txt), then the fact.
        ("for later: our aws account id is 123456789012", "our aws account id is 123456789012"),
        ("i want you to know that my son's school finishes at 3pm",
         "my son's school finishes at 3pm"),
        ("Please keep track of this: the contractor's rate is 80 EUR/h",
         "the contractor's rate is 80 EUR/h"),
        ("can u remember that my landlord is called Mr. Petrov", "my landlord is called Mr. Petrov"),
    ],
)
def test_a_request_to_remember_gives_its_fact(text: str, fact: str) -> None:
    request = read_memory_request(text)
    assert request is not None and request.fact == fact
    assert request.statement in text


@pytest.mark.parametrize(
    "text",
    [
        "Remember when we fixed the login bug?",
        "I remember that it worked before.",
        "Do you remember what I said about the API?",
        "Remember that?",
        "remember this",
        "Remember that bug from last week?",
        "Note that the server restarts at midnight",  # information, not a request to keep it
        "Can you remember it?",
        # A to-do that leans on the conversation: a kept fact could not resolve "that function".
        "remember to handle the None case in that function",
        "don't forget to close it",
        "save this file as utf-8",
        "is it slow, remember that?",
        # A lead that tells rather than asks to keep.
        "fyi: the build is red on main",
        "heads up - prod is down",
        "I noted that the tests fail on windows",
        "What you should know: how do I do X?",
    ],
)
def test_a_question_a_memory_of_ones_own_or_a_bare_remember_is_no_request(text: str) -> None:
    assert read_memory_request(text) is None


def test_a_fact_naming_one_value_is_keyed_by_its_subject() -> None:
    first = read_memory_request("Remember that the staging DB is db2")
    second = read_memory_request("Keep in mind that the staging DB is db3.")
    assert first is not None and second is not None
    assert fact_key(first) == fact_key(second) == "fact.the-staging-db"
    rotated = read_memory_request("Remember that the CI token is rotated monthly")
    stored = read_memory_request("Remember that the CI token is stored in Vault")
    assert rotated is not None and stored is not None
    assert fact_key(rotated) != fact_key(stored)  # two facts about one subject


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_reads_without_error_and_a_fact_comes_from_it(text: str) -> None:
    request = read_memory_request(text)
    if request is not None:
        assert request.fact and request.fact in text
        assert re.fullmatch(r"fact\.[a-z0-9-]+", fact_key(request))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["Remember that ", "Keep in mind that ", "For future reference, "]),
       st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd", "Zs")),
               min_size=1, max_size=80))
def test_every_request_form_keeps_what_follows_it(lead: str, rest: str) -> None:
    request = read_memory_request(lead + rest)
    if request is not None:
        assert request.fact == rest.strip().rstrip(" .!;?").strip()


@pytest.mark.parametrize(
    ("sentence", "plain"),
    [
        ("Keep in mind I prefer tabs over spaces.", "I prefer tabs over spaces."),
        ("Remember that I hate long meetings", "I hate long meetings"),
        ("FYI, I always use pytest", "I always use pytest"),
        ("I prefer tabs", "I prefer tabs"),
        ("Remember", "Remember"),
    ],
)
def test_a_preference_said_as_a_request_is_the_preference(sentence: str, plain: str) -> None:
    assert without_keep_lead(sentence) == plain


@pytest.mark.parametrize(
    ("sentence", "plain"),
    [
        ("Actually, I prefer a formal tone.", "I prefer a formal tone."),
        ("Oh and I prefer tabs", "I prefer tabs"),
        ("btw, by the way: I hate trailing commas", "I hate trailing commas"),
        ("So I prefer short answers", "I prefer short answers"),
        ("I prefer tabs", "I prefer tabs"),
        ("Actually.", "Actually."),  # nothing after it: as said
        ("Also-ran tools are fine", "Also-ran tools are fine"),
        ("Unrelated: I prefer tabs", "I prefer tabs"),  # an announcement too (D406)
        ("Quick question, actually I prefer tabs", "I prefer tabs"),
        ("Unrelated question: ok", "Unrelated question: ok"),
    ],
)
def test_a_statement_loses_the_words_that_lead_into_it(sentence: str, plain: str) -> None:
    assert without_discourse_lead(sentence) == plain


@pytest.mark.parametrize(
    ("what", "fully"),
    [
        ("the billing db host", True),
        ("the db host", True),
        ("the billing migration", False),  # one word in common is no name
        (None, True),  # "forget that": what the turn before kept
        ("the tabs thing", True),  # nothing kept matches: answered as such, not asked
    ],
)
def test_a_kept_entry_is_named_by_every_word_said(what: str | None, fully: bool) -> None:
    from hrm.reading.rules.memory import names_fully

    canon = {"fact.the-billing-db-host": "the billing db host is pg-billing-2"}
    assert names_fully(canon, what) is fully


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("remember that our staging box is stg-04 fyi", "our staging box is stg-04"),
        ("Remember that the venue is in Porto, btw.", "the venue is in Porto"),
        ("keep in mind our office closes at 6 (just so you know)", "our office closes at 6"),
        ("remember that the build uses Python 3.12 lol", "the build uses Python 3.12"),
        ("Remember that our deploys are on Fridays, by the way", "our deploys are on Fridays"),
        ("remember that the band is called For the Record", "the band is called For the Record"),
    ],
)
def test_a_kept_fact_leaves_out_the_aside_it_ends_on(text: str, kept: str) -> None:
    request = read_memory_request(text)
    assert request is not None and request.fact == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I prefer tabs, just so you know", "I prefer tabs"),
        ("Actually, I prefer metric units btw", "I prefer metric units"),
        ("btw", "btw"),  # nothing else to keep: as said
    ],
)
def test_a_kept_preference_leaves_out_the_aside_it_ends_on(text: str, kept: str) -> None:
    assert without_discourse_lead(text) == kept


@given(st.text(max_size=200))
def test_leaving_out_an_aside_keeps_a_nonempty_start_of_the_text(text: str) -> None:
    kept = without_trailing_aside(text)
    assert text.startswith(kept)
    assert kept.strip() or kept == text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("no, I prefer tabs", "I prefer tabs"),
        ("No. Use metric units", "Use metric units"),
        ("nope, always use metric", "Always use metric"),
        ("no, that is not what I asked, I prefer short answers", "I prefer short answers"),
        ("nothing fancy, I prefer tabs", "nothing fancy, I prefer tabs"),  # no feedback
    ],
)
def test_a_kept_preference_leaves_out_the_feedback_it_opens_with(text: str, kept: str) -> None:
    # D419: the canon kept "no, I prefer tabs" under the key "no-i-prefer-tabs".
    assert without_discourse_lead(text) == kept


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("What do you know about me?", True),
        ("ok so what have you remembered so far?", True),
        ("tell me what you know about me", True),
        ("list my preferences please", True),
        ("what's in your memory about me?", True),
        ("what do you know about kubernetes operators?", False),
        ("do you remember how to configure nginx?", False),
        ("what do you know about me and my team's deploy process, and how should we change it?",
         False),  # more than the question: the model's
    ],
)
def test_what_asks_what_is_kept(text: str, asks: bool) -> None:
    assert read(text).has(IntentKind.LIST_KEPT) is asks
