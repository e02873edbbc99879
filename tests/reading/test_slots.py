"""Slots, read leniently once the kind is known: counts in words, what to forget, which problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.reading import IntentKind, Slots
from hrm.reading.slots import SLOT_CHARS, appositive_named, number_value, slots_for

K = IntentKind


@pytest.mark.parametrize(
    ("kind", "sentence", "expected"),
    [
        pytest.param(K.FOCUS, "for the next 2 turns", {"turns": 2}, id="digits"),
        pytest.param(K.FOCUS, "for the next two turns", {"turns": 2}, id="number-word"),
        pytest.param(K.FOCUS, "concentrate on the CSV import for the next 3 messages", {"turns": 3, "topic": "the CSV import"}, id="messages"),
        pytest.param(K.FOCUS, "next 4 msgs pls stay on the pricing page", {"turns": 4, "topic": "the pricing page"}, id="msgs"),
        pytest.param(K.FOCUS, "stay on this for the next couple of turns", {"turns": 2}, id="couple"),
        pytest.param(K.FOCUS, "keep on the dns migration for 3 more turns", {"turns": 3, "topic": "the dns migration"}, id="more-turns"),
        pytest.param(K.FOCUS, "lets stick with the parser for now", {"topic": "the parser"}, id="no-count"),
        pytest.param(K.FOCUS, "focus on it for the next 900 turns", {}, id="absurd-count"),
        pytest.param(K.FORGET, "forget that", {}, id="that"),
        pytest.param(K.FORGET, "delete that from your memory", {}, id="that-from-memory"),
        pytest.param(K.FORGET, "Actually scratch that.", {}, id="scratch-that"),
        pytest.param(K.FORGET, "forget about my cat", {"what": "my cat"}, id="about"),
        pytest.param(K.FORGET, "Forget what i told you about my job", {"what": "my job"}, id="what-i-told"),
        pytest.param(K.FORGET, "erase the preference for metric units", {"what": "metric units"}, id="preference-for"),
        pytest.param(K.FORGET, "dont keep my home address anymore, delete it", {"what": "my home address"}, id="dont-keep"),
        pytest.param(K.RESOLVE, "Mark the webhook problem as done", {"ref": "webhook"}, id="resolve-named"),
        pytest.param(K.RESOLVE, "This is resolved.", {}, id="resolve-this"),
        pytest.param(K.RESOLVE, "ok the invoice rounding thing is fixed, close it pls", {"ref": "invoice rounding"}, id="resolve-thing"),
        pytest.param(K.PARK, "Let's park the offsite for now.", {"ref": "offsite"}, id="park"),
        pytest.param(K.PARK, "park it", {}, id="park-it"),
        pytest.param(K.RESUME, "lets go back to the webhook stuff", {"topic": "webhook"}, id="resume-named"),
        pytest.param(K.RESUME, "Where were we?", {}, id="resume-bare"),
        pytest.param(K.DECISION, "Decided: Netlify.", {"statement": "Netlify"}, id="decided-colon"),
        pytest.param(K.DECISION, "Postgres it is.", {"statement": "Postgres"}, id="it-is"),
        pytest.param(K.DECISION, "We agreed the release goes out on the 14th", {"statement": "the release goes out on the 14th"}, id="agreed"),
        pytest.param(K.DECISION, "let's go with Decimal for the invoice totals", {"statement": "Decimal for the invoice totals"}, id="go-with"),
        pytest.param(K.FACT, "remember that our staging db is db2", {"statement": "our staging db is db2", "subject": "our staging db"}, id="fact"),
        pytest.param(K.FACT, "fyi the api base url is https://x.example, keep it in mind", {"statement": "the api base url is https://x.example", "subject": "the api base url"}, id="fact-tail"),
        pytest.param(K.FACT, "note this down", {}, id="fact-only-pointing-words"),
        pytest.param(K.FACT, "please note it down", {}, id="fact-only-pointing-words-2"),
        pytest.param(K.FACT, "note that the office closes at 6", {"statement": "the office closes at 6", "subject": "the office closes at 6"}, id="fact-note-that"),
        # "remember" however spelt is the request, not the fact (D409)
        pytest.param(K.FACT, "remeber that the venue is in Porto", {"statement": "the venue is in Porto", "subject": "the venue"}, id="fact-remeber"),
        pytest.param(K.FACT, "Remmber: the key rotates monthly", {"statement": "the key rotates monthly", "subject": "the key"}, id="fact-remmber"),
        pytest.param(K.FACT, "remind that the venue is in Porto", {"statement": "remind that the venue is in Porto", "subject": "remind that the venue"}, id="fact-another-verb"),
        pytest.param(K.PREFERENCE, "My preference: metric units, always.", {"statement": "My preference: metric units, always", "scope": "instruction"}, id="pref-colon"),
        pytest.param(K.PREFERENCE, "no more java examples for me, kotlin only", {"statement": "no more java examples for me, kotlin only", "scope": "instruction"}, id="pref-no-more"),
        pytest.param(K.PREFERENCE, "No, metric units please", {"statement": "metric units please", "scope": "instruction"}, id="pref-no-pause"),
        pytest.param(K.PREFERENCE, "I think I'd prefer tabs over spaces", {"statement": "I think I'd prefer tabs over spaces", "scope": "explicit", "hedged": True}, id="pref-hedged"),
        pytest.param(K.SET_ASIDE, "Forget the offsite for now, what about the budget?", {"what": "the offsite", "rest": "what about the budget?"}, id="set-aside"),
        pytest.param(K.THANKS, "thanks a lot", {}, id="no-slots"),
    ],
)
def test_slots_of_a_known_kind(kind: IntentKind, sentence: str, expected: dict[str, object]) -> None:
    assert slots_for(kind, sentence).filled() == expected


def test_forget_that_i_is_acted_on_only_if_something_kept_says_it() -> None:
    slots = slots_for(K.FORGET, "forget that I prefer tabs")
    assert (slots.what, slots.sure) == ("I prefer tabs", False)


@pytest.mark.parametrize(
    ("word", "value"),
    [("3", 3), ("three", 3), ("Twelve", 12), ("couple", 2), ("a", 1), ("1000", None), ("few", None), ("x", None)],
)
def test_number_words(word: str, value: int | None) -> None:
    assert number_value(word) == value


@given(st.sampled_from(list(IntentKind)), st.text(max_size=600))
def test_slots_never_raise_on_any_text(kind: IntentKind, text: str) -> None:
    assert isinstance(slots_for(kind, text), Slots)


@given(st.sampled_from(list(IntentKind)), st.text(alphabet="ab ,.?'\n\x00\ud800", max_size=80))
def test_slots_read_only_a_bounded_head(kind: IntentKind, head: str) -> None:
    """A megabyte message costs what its first few hundred characters cost."""
    text = head + "forget about the cat for the next two turns " * 25_000
    assert slots_for(kind, text) == slots_for(kind, text[:SLOT_CHARS])


@pytest.mark.parametrize("text", ["", "   ", "\x00\x01\x02", "\ud800\udfff", "…" * 50])
def test_unreadable_text_gives_empty_or_partial_slots(text: str) -> None:
    for kind in IntentKind:
        slots_for(kind, text)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (", the thing about charts", "charts"),
        (" that from memory, the bit about my address", "my address"),
        (", I mean the note on the staging box", "the staging box"),
        (" that from memory", None),
        (", thanks", None),
    ],
)
def test_what_that_is_named_as_further_on(text: str, named: str | None) -> None:
    assert appositive_named(text) == named
