"""Reading a correction of what was just kept, and applying it to the kept statement (D469)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.reading.reader import available_tiers, read
from hrm.reading.rules.corrections import corrected, correction_clause, correction_slots
from hrm.reading.types import IntentKind, ReadingContext, Slots

JUST_KEPT = ReadingContext(just_kept="preference.units")


@pytest.mark.parametrize(
    ("kept", "said", "now"),
    [
        ("I prefer Celsius", "no I meant Fahrenheit", "I prefer Fahrenheit"),
        ("I prefer answers in German", "scratch that, I prefer answers in English",
         "I prefer answers in English"),
        ("the CI runs on GitHub Actions", "scratch that, I meant the CI runs on GitLab",
         "the CI runs on GitLab"),
        ("the team meeting is on Monday", "actually, make that Tuesday",
         "the team meeting is on Tuesday"),
        ("the staging server is staging-04.internal",
         "I was wrong about the staging server, it's staging-05.internal",
         "the staging server is staging-05.internal"),
        ("my son's school starts at 8:30", "sorry, my son's school starts at 8:15, not 8:30",
         "my son's school starts at 8:15"),
        ("go with MySQL for the database", "no wait, I meant Postgres not MySQL",
         "go with Postgres for the database"),
        ("the standup is at 9:30", "Correction: the standup is at 10:00",
         "the standup is at 10:00"),
        ("I prefer dark mode", "actually, light mode not dark mode", "I prefer light mode"),
        ("my locker code is 4512", "oops, make it 4513", "my locker code is 4513"),
        ("I prefer Celsius", "sorry, I meant to say Fahrenheit", "I prefer Fahrenheit"),
        # the words a few new ones line up with, not the last ones
        ("the Acme call is on Monday at 3pm", "actually, make that Tuesday",
         "the Acme call is on Tuesday at 3pm"),
        ("the Acme call is on Monday at 3pm", "no, make it 4pm", "the Acme call is on Monday at 4pm"),
        ("go with Decimal for the amounts", "actually, make that integer cents",
         "go with integer cents for the amounts"),
        ("go with SQLAlchemy 2.0 for the ORM", "actually, make that SQLModel",
         "go with SQLModel for the ORM"),
        ("the release is on the 14th", "sorry, the 21st not the 14th", "the release is on the 21st"),
        ("the team meeting is on Monday", "not Monday, Tuesday", "the team meeting is on Tuesday"),
        ("my train is at 8:30", "sory, 8:15 not 8:30", "my train is at 8:15"),
        ("always force-push to main", "no I meant never force-push to main",
         "never force-push to main"),
        # a lead word and one value of a kind (D501)
        ("the meeting is on Wednesday", "actually Thursday", "the meeting is on Thursday"),
        ("my seat is A7", "no sorry, B3", "my seat is B3"),
    ],
)
def test_a_correction_rewrites_what_was_kept(kept: str, said: str, now: str) -> None:
    assert corrected(kept, correction_slots(said)) == now


@pytest.mark.parametrize(
    "said",
    ["no thanks", "sorry, light mode", "actually, that sounds good", "no", "ok",
     "I meant to ask about the build", "wait", "scratch that", "no I meant it",
     "no, I meant what I said", "sorry, I meant to type that in Slack",
     "no I meant the staging one", "actually, make that a bit shorter", "actually yes",
     "sorry, wrong chat", "sorry for the typo", "actually, never mind"],
)
def test_what_corrects_nothing_is_no_correction(said: str) -> None:
    assert correction_slots(said).statement is None


def test_a_correction_is_read_only_right_after_something_was_kept() -> None:
    tiers = available_tiers()
    after = read("no I meant Fahrenheit", JUST_KEPT, tiers)
    assert [i.kind for i in after if i.kind is IntentKind.CORRECT]
    assert after.first(IntentKind.CORRECT).reader == "rules:corrections"
    cold = read("no I meant Fahrenheit", ReadingContext(), tiers)
    assert all(i.reader != "rules:corrections" for i in cold)
    asked = read("no I meant Fahrenheit, is that a problem?", JUST_KEPT, tiers)
    assert all(i.reader != "rules:corrections" for i in asked)


def test_words_replaced_that_the_kept_statement_does_not_hold_correct_nothing() -> None:
    slots = correction_slots("no I meant a friendly tone not firm")
    assert slots.what == "firm" and corrected("I prefer metric units", slots) is None


def test_a_few_words_that_line_up_with_nothing_change_nothing() -> None:
    assert corrected("I prefer emojis in answers", Slots(statement="no emojis")) is None
    assert corrected("I prefer Celsius", Slots(statement="Celsius")) is None  # no change
    assert corrected("my desk is by the window", Slots(statement="Tuesday")) is None


def test_the_question_after_a_correction_is_not_part_of_it() -> None:
    said = "no I meant Fahrenheit, and what's 30C in that?"
    assert correction_slots(said).statement == "Fahrenheit"
    assert correction_clause(said) == "no I meant Fahrenheit"


@given(st.text(max_size=80), st.text(max_size=120))
def test_any_correction_of_any_kept_text_gives_text_holding_the_new_words_or_none(
    kept: str, said: str
) -> None:
    slots = correction_slots(said)
    now = corrected(kept, slots)
    assert now is None or (slots.statement or "").strip() in now
