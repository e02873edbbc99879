"""Cue words as people mistype them are read as meant (D452); English words never change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.spelling import corrected


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("i prefr dark mode in all the apps u suggest", "i prefer dark mode in all the apps u suggest"),
        ("forgt that", "forget that"),  # one slip from "forget" and "forgot": listed first wins
        ("Fogret my address", "Forget my address"),  # two letters swapped; the capital kept
        ("remeber that the venue is in Porto", "remember that the venue is in Porto"),
        ("the bug is resloved", "the bug is resolved"),
        ("lets foucs on the api", "lets focus on the api"),
        ("we shoud use tabs", "we should use tabs"),
    ],
)
def test_a_cue_one_slip_away_is_read_as_meant(typed: str, read: str) -> None:
    assert corrected(typed) == read


@pytest.mark.parametrize(
    "text",
    [
        "clean the cache",  # one slip from the cue "clear", and a word of its own
        "thanks, that fixes it",  # "fixes" is "fix" inflected, not a slip of "fixed"
        "she prefers tea",
        "stopping now",
        "he remembers the letter",  # "letter" is one slip from "better", but not after its "b"
        "How do I rename a git branch in the billing repo?",
        "xyzzy frobnicate quux",
    ],
)
def test_english_words_and_words_near_no_cue_stay_as_typed(text: str) -> None:
    assert corrected(text) is text


@given(st.text(max_size=300))
def test_correction_never_raises_and_is_stable(text: str) -> None:
    once = corrected(text)
    assert corrected(once) == once
    assert len(once) <= len(text) + len(text) // 4 + 1  # a cue is at most a letter longer a word


def test_a_mistyped_command_is_acted_on_and_not_sent_to_the_model(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("remember that my sister's birthday is on may 3")
        forgot = h.turn("forgt that")
        assert forgot.action == "remember"
        assert forgot.response == "Forgotten: “my sister's birthday is on may 3”."
        kept = h.turn("i prefr light mode")
        assert kept.response == "Noted as canon: “i prefer light mode”."
        assert h.turn_number == 3
