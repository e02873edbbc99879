"""Bad input: any text is read in bounded time into an empty or partial `Reading`, never an
exception (issue 29, "Bad input")."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.governance.preferences import PreferenceClassifier
from hrm.reading.reader import available_tiers, read
from hrm.reading.rules.preferences import PreferenceRules
from hrm.reading.types import IntentKind, Reading, ReadingContext

_CLASSIFIER = PreferenceClassifier(PolicySurface())
_TIERS = available_tiers(
    PreferenceRules(lambda s: _CLASSIFIER.classify(s, "user"), _CLASSIFIER.spans)
)
_CONTEXTS = st.sampled_from([
    ReadingContext(),
    ReadingContext(pending="preference"),
    ReadingContext(pending="switch"),
    ReadingContext(just_kept="fact.x", kept={"fact.x": "my cat is called Tom"}),
])  # fmt: skip
_WORDS = st.sampled_from([
    "forget", "that", "I", "prefer", "always", "next", "two", "turns", "focus", "on", "the",
    "problem", "is", "resolved", "decided:", "it", "where", "we", "were", "?", ".", ",", "\n",
    "```", "Traceback (most recent call last):", "pls", "u", "remember", "park", "for", "now",
])  # fmt: skip
_ANY_TEXT = st.text(
    alphabet=st.characters(codec=None, blacklist_categories=()), max_size=400
) | st.lists(_WORDS, max_size=60).map(" ".join)


def _invariants(reading: Reading) -> None:
    said = reading.said
    for intent in reading.intents:
        assert 0 <= intent.span[0] < intent.span[1] <= len(said)
        assert 0.0 <= intent.confidence <= 1.0
    assert [i.span for i in reading.intents] == sorted(i.span for i in reading.intents)
    reading.to_record()  # JSON-ready


@settings(max_examples=150, deadline=None)  # each reads with the sentence model (~45 ms)
@given(_ANY_TEXT, _CONTEXTS)
def test_any_text_reads_without_raising_and_keeps_the_invariants(
    text: str, context: ReadingContext
) -> None:
    _invariants(read(text, context, _TIERS))


def test_empty_whitespace_and_control_characters_read_as_nothing() -> None:
    for text in ("", "   \n\t  ", "\x00\x01\x02\x1b[31m\x7f", "\ud800\udfff lone surrogates"):
        reading = read(text, ReadingContext(), _TIERS)
        assert not reading.intents or all(i.kind is not IntentKind.FORGET for i in reading)


def test_invalid_utf8_carried_as_surrogates_is_read() -> None:
    text = b"I prefer tabs \xff\xfe over spaces.".decode("utf-8", "surrogateescape")
    reading = read(text, ReadingContext(), _TIERS)
    _invariants(reading)


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        read(text, ReadingContext(), _TIERS)
        best = min(best, time.perf_counter() - start)
    return best


def test_reading_is_linear_in_the_length_of_the_message() -> None:
    # Words that start many rules (forget, prefer, next, focus, resolved), and no sentence
    # stop: the worst case for a pattern that would backtrack. Per character, 16 KB must not
    # cost much more than 1 KB (a quadratic reader would cost 16 times as much).
    unit = "forget that i prefer the next two focus resolved where we were, "
    small = (unit * 20)[:1000]
    large = (unit * 300)[:16000]
    per_small = _seconds(small) / len(small)
    per_large = _seconds(large) / len(large)
    assert per_large <= 6 * per_small + 2e-6


@pytest.mark.parametrize("unit", ["-", "- ", ",", " :", " ", "that ", "remember ", "a, "])
def test_runs_of_separators_are_read_in_linear_time(unit: str) -> None:
    # A pattern that looks for "…, remember that" or "store this: …" must not try every
    # position of a run of dashes or commas against the rest of it. Readers look at a
    # message's first 2,000 characters, so the comparison stays under that.
    small = ("remember " + unit * 400)[:125]
    large = ("remember " + unit * 4000)[:2000]
    per_small = _seconds(small) / len(small)
    per_large = _seconds(large) / len(large)
    assert per_large <= 6 * per_small + 2e-6


def test_a_megabyte_is_read_by_its_head() -> None:
    text = "I prefer tabs. " + "x" * 1_000_000
    reading = read(text, ReadingContext(), _TIERS)
    assert reading.has(IntentKind.PREFERENCE)
