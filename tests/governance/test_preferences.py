"""The preference truth model (001 §12.4): which statements may become canon."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.config import PolicySurface
from hrm.errors import ErrorCode, HRMError
from hrm.governance import preferences
from hrm.governance.preferences import (
    PreferenceClass,
    PreferenceClassification,
    PreferenceClassifier,
)


@pytest.fixture(scope="module")
def classifier() -> PreferenceClassifier:
    return PreferenceClassifier(PolicySurface())


@dataclass(frozen=True)
class Case:
    statement: str
    source: str
    expected: PreferenceClass


CASES = [
    Case("I prefer tabs over spaces", "user", PreferenceClass.EXPLICIT),
    Case("i hate meetings before ten", "user", PreferenceClass.EXPLICIT),
    Case("I'm the kind of person who plans ahead", "user", PreferenceClass.EXPLICIT),
    Case("I never use dark mode", "user", PreferenceClass.EXPLICIT),
    Case("I prefer tabs over spaces", "agent", PreferenceClass.INFERRED_CONFIRM_REQUIRED),
    Case("User often works late on Fridays", "user", PreferenceClass.BEHAVIORAL),
    Case("I noticed that builds fail on Mondays", "agent", PreferenceClass.BEHAVIORAL),
    Case("Based on history, deploys happen at noon", "system", PreferenceClass.BEHAVIORAL),
    Case("Statistically the user answers fast", "agent", PreferenceClass.BEHAVIORAL),
    Case("Short answers would be better", "user", PreferenceClass.INFERRED_CONFIRM_REQUIRED),
    Case("They avoid long meetings", "agent", PreferenceClass.INFERRED_CONFIRM_REQUIRED),
    Case("The build takes four minutes", "user", PreferenceClass.INFERRED_SILENT),
    Case("", "user", PreferenceClass.INFERRED_SILENT),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.statement or "empty") for c in CASES])
def test_statements_are_classified_into_the_four_tiers(
    classifier: PreferenceClassifier, case: Case
) -> None:
    assert classifier.classify(case.statement, case.source).preference_class is case.expected


def test_explicit_user_preference_can_be_canonized_at_once(
    classifier: PreferenceClassifier,
) -> None:
    result = classifier.classify("I prefer concise answers")
    assert result == PreferenceClassification(
        preference_class=PreferenceClass.EXPLICIT,
        statement="I prefer concise answers",
        matched_pattern="I prefer",
        confidence=0.9,
        can_canonize=True,
        needs_confirmation=False,
    )


def test_inferred_preference_needs_confirmation_before_canon(
    classifier: PreferenceClassifier,
) -> None:
    result = classifier.classify("We'd rather ship on Tuesdays", source="agent")
    assert (result.can_canonize, result.needs_confirmation, result.confidence) == (True, True, 0.5)


def test_behavioral_and_silent_never_canonize(classifier: PreferenceClassifier) -> None:
    behavioral = classifier.classify("user usually replies in the morning")
    silent = classifier.classify("the sky is grey")
    assert not behavioral.can_canonize and not behavioral.needs_confirmation
    assert not silent.can_canonize and not silent.needs_confirmation
    assert (behavioral.confidence, silent.confidence) == (0.7, 0.3)


def test_any_object_with_preference_patterns_is_a_policy() -> None:
    @dataclass(frozen=True)
    class Policy:
        PREFERENCE_PATTERNS: tuple[str, ...] = (r"\bmy favourite\b",)

    result = PreferenceClassifier(Policy()).classify("My favourite editor is vim")
    assert result.preference_class is PreferenceClass.EXPLICIT
    assert result.matched_pattern == r"\bmy favourite\b"


def test_an_invalid_pattern_is_rejected_naming_it() -> None:
    @dataclass(frozen=True)
    class Policy:
        PREFERENCE_PATTERNS: tuple[str, ...] = ("I (prefer",)

    with pytest.raises(HRMError) as info:
        PreferenceClassifier(Policy())
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "I (prefer" in info.value.message


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=80), source=st.sampled_from(["user", "agent", "system"]))
def test_classification_is_total_and_consistent(text: str, source: str) -> None:
    classifier = PreferenceClassifier(PolicySurface())
    result = classifier.classify(text, source)
    assert result.statement == text
    assert result.can_canonize == (
        result.preference_class
        in (PreferenceClass.EXPLICIT, PreferenceClass.INFERRED_CONFIRM_REQUIRED)
    )
    assert result.needs_confirmation == (
        result.preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED
    )
    hedged = preferences._HEDGE.search(text) is not None
    assert (result.matched_pattern is not None) == (
        result.preference_class is PreferenceClass.EXPLICIT
        or (result.needs_confirmation and hedged and source == "user")
    )
    if hedged:
        assert result.preference_class is not PreferenceClass.EXPLICIT  # D64
    if source != "user":
        assert result.preference_class is not PreferenceClass.EXPLICIT


@settings(max_examples=100, deadline=None)
@given(prefix=st.text(max_size=20), rest=st.text(max_size=40))
def test_a_user_saying_i_prefer_anywhere_is_explicit(prefix: str, rest: str) -> None:
    text = f"{prefix} I PREFER {rest}"
    result = PreferenceClassifier(PolicySurface()).classify(text)
    if preferences._HEDGE.search(text):  # "maybe I prefer …" is asked about (D64)
        assert result.preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED
        assert result.matched_pattern == "I prefer"
    else:
        assert result.preference_class is PreferenceClass.EXPLICIT


@pytest.mark.parametrize(
    "statement",
    [
        "I prefer concise answers, I think",
        "Maybe I always want tables for comparisons",
        "I hate long intros, probably",
        "I guess I never use dark mode",
        "I'm not sure, but I like short commit messages",
        "Perhaps I prefer tabs",
    ],
)
def test_a_hedged_preference_is_asked_about_not_canonized(
    classifier: PreferenceClassifier, statement: str
) -> None:
    # D64: 001 §12.4 canonizes what the user "stated clearly"; a hedge takes that back.
    result = classifier.classify(statement)
    assert result.preference_class is PreferenceClass.INFERRED_CONFIRM_REQUIRED
    assert result.needs_confirmation and result.can_canonize
    assert result.matched_pattern is not None  # the record says which pattern it matched
    assert classifier.spans(statement, result.preference_class)  # scope can judge it


@pytest.mark.parametrize(
    "statement",
    [
        "I'm the kind of person who plans ahead",  # "kind of" is no hedge
        "I never think about fonts",  # "think" without "I" before it
        "I prefer answers that cite the maintainers",
    ],
)
def test_words_near_a_hedge_do_not_make_one(
    classifier: PreferenceClassifier, statement: str
) -> None:
    assert classifier.classify(statement).preference_class is PreferenceClass.EXPLICIT


_WORDS = ["I", "prefer", "hate", "always", "never", "like", "don't", "need", "I'm", "the", "kind",
          "of", "person", "who", "user", "often", "noticed", "that", "based", "on", "history",
          "statistically", "better", "rather", "avoid", "tabs", "İ", "ı", "ſ", "Prefer", "i"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join),
    st.lists(st.sampled_from(_WORDS), max_size=8).map("".join),
    st.text(max_size=30),
))
def test_the_prefilters_never_change_what_is_matched(text: str) -> None:
    classifier = PreferenceClassifier(PolicySurface())
    expected = next(
        (p.pattern for p in classifier._patterns if p.search(text)), None
    )
    assert classifier._match_preference_pattern(text) == expected
    assert PreferenceClassifier._is_behavioral_observation(text) == any(
        re.search(m, text, re.IGNORECASE) for m in preferences._BEHAVIORAL_MARKERS
    )
    assert PreferenceClassifier._looks_like_preference(text) == any(
        re.search(i, text, re.IGNORECASE) for i in preferences._PREFERENCE_INDICATORS
    )
