"""What the person asked to forget stays out of what the model is shown (D450): the statement in
any case or as a key, and the names it holds — never a month, never part of a longer word."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.stacks.attention import _forgotten


@pytest.mark.parametrize(
    ("forgotten", "shown", "seen"),
    [
        ("I live in Lisbon", "Sintra, since you live in Lisbon.", "Sintra, since you live in [forgotten]."),
        ("I live in Lisbon", "REMEMBER THAT I LIVE IN LISBON", "REMEMBER THAT [forgotten]"),
        ("I live in Lisbon", "fact.i-live-in-lisbon: noted", "fact.[forgotten]: noted"),
        ("my boss name is Carla", "Ask Carla first.", "Ask [forgotten] first."),
        ("my boss name is Carla", "Carlas and Carlatown stay", "Carlas and Carlatown stay"),
        ("the grant deadline is March 3", "We start in March.", "We start in March."),
        ("my name is Ana Costa", "Dear Ana Costa,", "Dear [forgotten],"),
        ("my name is Ana Costa", "Costa is on the line", "[forgotten] is on the line"),
        # what the statement said its subject is, repeated in an answer's own words (D467)
        ("her favourite cake is lemon drizzle", "Since her favourite is lemon drizzle, order it.",
         "Since her favourite is [forgotten], order it."),
        ("my locker code is 4512", "Your locker code is 4512.", "Your locker code is [forgotten]."),
        ("I'm allergic to peanuts", "Avoid the satay: it has peanuts.",
         "Avoid the satay: it has [forgotten]."),
        ("our prod database is db-prod-7", "connect to db-prod-7 first",
         "connect to [forgotten] first"),
        ("the answer is fine", "That is fine by me.", "That is fine by me."),  # too common
        # what a forgotten preference preferred (D498), not its common last word
        ("I prefer metric units", "Here it is in metric units, as you prefer.",
         "Here it is in [forgotten], as you prefer."),
        ("I prefer metric units", "Two units of work", "Two units of work"),
        ("i live in lisbon", "you live in Lisbon", "you live in Lisbon"),  # no capital: no name
    ],
)
def test_what_a_forget_hides_from_the_model(forgotten: str, shown: str, seen: str) -> None:
    matcher = _forgotten((forgotten,))
    assert matcher is not None
    assert matcher.sub(shown) == seen
    assert matcher.search(shown) is (seen != shown)


def test_nothing_forgotten_or_too_short_to_match_safely_hides_nothing() -> None:
    assert _forgotten(()) is None
    assert _forgotten(("ok",)) is None


@given(st.text(max_size=200))
def test_a_statement_never_survives_its_forget(text: str) -> None:
    matcher = _forgotten(("I live in Lisbon",))
    assert matcher is not None
    assert "i live in lisbon" not in matcher.sub(text + " I live in Lisbon " + text).lower()
