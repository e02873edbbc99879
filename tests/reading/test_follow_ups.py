"""Reading whether an input is the conversation's next move, or says it opens a new topic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reading.rules.cues import (
    cues_of,
    is_closing,
    is_follow_up,
    opens_new_topic,
    remarks_on_own_subject,
    without_announcement,
    without_opening,
)


@pytest.mark.parametrize(
    "text",
    [
        "Would useMemo help here?",
        "would reading it in chunks work",  # no question mark, a question's first word
        "What about large files over 5 GB?",
        "CI runs in UTC and my laptop is in Berlin, could that be it?",
        "OK so for the billing service, how do we migrate the data?",
        "Thanks! Is 32 GB of RAM enough?",  # an interjection, then a question
        "Show me the upload function",
        "Walk me through designing a URL shortener",
        "Now tighten the closing",
        "Make the opening paragraph less generic",
        "make it shorter",
        "Explain how the race detector finds these.",
        "Got it. Give me the backend block, please.",
        # reports on the work at hand, and short reactions (D61)
        "I restarted the upstream service but nothing changed",
        "We've already tried a bigger instance.",
        "The tests for it are failing now.",  # names the work at hand: a report (D78)
        "I just ran it again and got the same error",
        "It listens on port 8000 and nginx points to 8080",
        "That fixed it, thanks!",
        "Fixed it — the signature check used the wrong secret.",  # D81: what was done to it
        "Tried that, and the wrong header is still sent",
        "They only need the reporting schema",
        "The logs say connect() failed (111: Connection refused)",
        "Stripe says signature verification failed",  # a service tells what it sees (D461)
        "error is: No signatures found matching the expected signature",
        "stripe dashboard shows 12 failed events",
        "Here is my config: /var/log/app/*.log { daily rotate 7 }",
        "Still failing.",
        "OK.",
        # what the person tells of the work at hand (D62)
        "We run three app servers behind a load balancer",
        "We collect email addresses and crash reports",  # "crash" names the reports
        "SESSION_COOKIE_AGE is set to two weeks",
        "The bundle is about 12 MB",
        "I have a CSV of 2 million sales rows",
        "My income varies a bit each month too",
        "Now add a retry to the upload function",
        "Fix it",
        "I like that idea. How would the villagers react?",  # a reaction, not a need
        # the question withdrawn because the answer was found (D433)
        "nvm it was the wrong user crontab",
        "never mind, it was a typo in the path",
    ],
)
def test_questions_requests_and_reports_are_follow_ups(text: str) -> None:
    assert is_follow_up(text)


@pytest.mark.parametrize(
    ("text", "aside"),
    [
        ("nvm it was the wrong user crontab", None),
        ("never mind that, it was a typo in the path", None),
        ("Never mind that, how do I rotate the signing secret?", "that"),
        ("nvm, the payment webhook is failing", ""),
        ("never mind the offsite", "the offsite"),
    ],
)
def test_never_mind_sets_aside_only_what_is_not_its_answer(text: str, aside: str | None) -> None:
    assert cues_of(text).aside == aside


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Our pods keep getting OOMKilled in the staging cluster",
        "I also need to write the quarterly report for the board by Friday",
        "Write the migration step for the billing invoices table",
        "Make a backup script for the database",  # a task, not a change to the answer
        "I need to set up log rotation for the app logs",  # a need is no report
        "We want to move the docs to a static site",
        "Also, my sourdough starter smells like nail polish remover",  # a subject of one's own
        "Next, the control plane rollout needs a plan",  # a need
        "I'd like to set up SSO for the admin panel",  # "like to" is a need
        "I have to renew my passport",
        "Someday rename the docs folder",  # a task
        "The enum columns break for the Postgres move in staging",  # something wrong
        "The invoice totals look wrong for the billing migration",  # a new subject
        "Our nightly ETL job took six hours instead of one",
        "Also the nightly backup job failed again last night.",  # something wrong (D78)
        # A statement with a question after it: the statement may be a new problem.
        "Our status page shows the API as degraded. What should the update say?",
        "x" * 5000 + "?",  # a long paste is not a follow-up
    ],
)
def test_statements_and_tasks_are_not(text: str) -> None:
    assert not is_follow_up(text)


@pytest.mark.parametrize(
    "text",
    [
        "Unrelated: how do I rename a git branch?",
        "Quick question, how do I undo the last commit?",
        "New task: add rate limiting to the public API",
        "Different topic: what's the best way to learn Rust?",
        "On another note, the nightly ETL job took six hours",
        "By the way, how do I pin a Go module?",
        "btw how do I pin a Go module?",
        "Separately, our staging database ran out of disk space",
        "Another thing: I have to onboard two new engineers",
        "OK, unrelated, but what's a good laptop?",
        "Off-topic: which keyboard do you like?",
        # said the way people learning English say it (D409)
        "sorry other thing, my laptop battery die very fast",
        "Other question: how i can renew my passport?",
        "One other thing, the deploy failed",
        # after a word on the last answer, at a sentence's start (D441)
        "ok I'll try the compost tea. Different topic: my neighbour's dog barks all night",
        "Thanks, that worked! Quick question: is Python 3.13 out?",
        "thank you, it is good. now other thing: how i ask my manager for holiday?",
    ],
)
def test_announced_new_topics(text: str) -> None:
    assert opens_new_topic(text)


@pytest.mark.parametrize(
    "text",
    [
        "How do I test the unrelated modules separately?",  # the words, not at the start
        "I tried it. It fails on an unrelated test now",  # nor at a sentence's start
        "What about large files?",
        "A new feature flag broke the build",  # "new" without "topic/task/…"
        "Other than that, it works",
        "other things are fine",
        "sorry, I meant the other one",
        "",
    ],
)
def test_the_words_elsewhere_announce_nothing(text: str) -> None:
    assert not opens_new_topic(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_both_readings_are_total(text: str) -> None:
    assert isinstance(is_follow_up(text), bool)
    assert isinstance(opens_new_topic(text), bool)
    assert isinstance(is_closing(text), bool)
    assert isinstance(remarks_on_own_subject(text), bool)


@pytest.mark.parametrize(
    ("text", "closing"),
    [
        ("Thanks, that's all for today.", True),
        ("Ok, I'm done for today. Thanks!", True),
        ("Thanks! Talk to you later!", True),
        ("Cheers, that helped a lot.", True),
        ("Good night!", True),
        ("That is all for now, bye", True),
        ("Thanks, what about the index?", False),  # thanks, then a question
        ("Thanks. Now add tests.", False),
        ("That's it, the build is green", False),
        ("That is all wrong", False),
        ("I'm done with the parser, what next?", False),
        ("Thanks! " * 40, False),  # too long to be only a goodbye
    ],
)
def test_a_thanks_or_goodbye_is_a_closing(text: str, closing: bool) -> None:
    assert is_closing(text) is closing


_STATEMENT = "Our nightly backup job to the storage bucket failed with an access error."


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["What about it?", "Why?", "Show me the code.", "OK.", "Thanks!"]),
                max_size=4))
def test_a_statement_anywhere_makes_a_message_no_follow_up(parts: list[str]) -> None:
    for at in range(len(parts) + 1):
        assert not is_follow_up(" ".join([*parts[:at], _STATEMENT, *parts[at:]]))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["Unrelated: ", "Quick question, ", "New topic: ", "By the way, "]),
       st.text(max_size=80))
def test_an_announcement_opens_a_topic_whatever_follows(marker: str, rest: str) -> None:
    assert opens_new_topic(marker + rest)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Unrelated: how do I rename a git branch?", "How do I rename a git branch?"),
        ("OK, unrelated, but what's a good laptop?", "What's a good laptop?"),
        ("By the way - is 32 GB enough?", "Is 32 GB enough?"),
        ("Separately, our staging database ran out of disk space",
         "Our staging database ran out of disk space"),
        ("Unrelated question: what's a good way to remove mould?",
         "What's a good way to remove mould?"),  # was titled "Question: what's …"
        ("Off-topic question, how do I boil eggs?", "How do I boil eggs?"),
        ("Completely different topic: how long should I rest a steak?",
         "How long should I rest a steak?"),
        ("Unrelated:", "Unrelated:"),  # nothing but the announcement: kept as said
        ("How do I rename a git branch?", "How do I rename a git branch?"),
    ],
)
def test_a_title_leaves_the_announcement_out(text: str, title: str) -> None:
    assert without_announcement(text) == title


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("ok forget the password I just gave you", "forget the password I just gave you"),
        ("OK so, forget it", "forget it"),
        ("Oh and also, remember the key rotates monthly", "remember the key rotates monthly"),
        ("By the way, I prefer tabs", "I prefer tabs"),
        ("Unrelated: pls remember that the box is stg-04", "Pls remember that the box is stg-04"),
        ("Quick question, ok so where were we?", "where were we?"),
        # answers and moves are what a sentence says, not how it opens
        ("no, forget it", "no, forget it"),
        ("thanks, bye", "thanks, bye"),
        ("please forget that", "please forget that"),
        # nothing but an opening stays as it was; a word that only begins like one stays
        ("ok", "ok"),
        ("Unrelated:", "Unrelated:"),
        ("okay-ish plan", "okay-ish plan"),
        ("Sofia is my manager", "Sofia is my manager"),
    ],
)
def test_an_opening_is_left_out_of_what_a_sentence_says(text: str, plain: str) -> None:
    assert without_opening(text) == plain


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_leaving_the_opening_out_only_ever_shortens_a_text(text: str) -> None:
    plain = without_opening(text)
    assert len(plain) <= len(text)
    assert plain.strip() or plain == text


@pytest.mark.parametrize(
    ("text", "remark"),
    [
        ("Our budget is about 5000 euros excluding flights.", True),
        ("My partner is vegetarian. Which cities should we pick?", True),
        ("Our Redis instance keeps evicting keys even though memory is at 60%", True),
        ("Our nightly backup job failed again last night.", False),  # something wrong
        ("My passport needs renewing before the trip.", False),  # a need
        ("I'm building a CSV importer for our orders table.", False),  # an undertaking
        ("My income varies a bit each month too", False),  # continues: a follow-up
        ("Which cities should we base ourselves in?", False),  # no remark at all
        ("Our budget is 5000 euros. Write a script that renames the branches.", False),
    ],
)
def test_remarks_on_ones_own_subject(text: str, remark: bool) -> None:
    assert remarks_on_own_subject(text) is remark
