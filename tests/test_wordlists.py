"""`HeadIndex` only ever rules a marker list out when its regular expression cannot match."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hrm._wordlists import HeadIndex, heads_of, required_literals
from hrm.governance import arbiter, signals
from hrm.governance.policy import POLICY
from hrm.governance.preferences import PreferenceClassifier
from hrm.reading.rules import focus as focus_requests
from hrm.reasoning import classifier

CLASSIFIER_LISTS: dict[str, re.Pattern[str]] = {
    **{f"domain:{name}": lexicon for name, lexicon in classifier.DOMAIN_LEXICONS.items()},
    **dict(classifier._HORIZONS),
    "multi_step": classifier._MULTI_STEP,
    "conjunction": classifier._CONJUNCTION,
    "heavy": classifier._HEAVY,
    "hedge": classifier._HEDGE,
    "vague": classifier._VAGUE,
    "conflict": classifier._CONFLICT,
    "high_stakes": classifier._HIGH_STAKES,
    "medium_stakes": classifier._MEDIUM_STAKES,
    "irreversible": classifier._IRREVERSIBLE,
    "list_item": classifier._LIST_ITEM,
}
MARKERS: dict[str, re.Pattern[str]] = {  # case-insensitive, on the text as written
    **{
        p.pattern: p
        for markers in (signals._EMERGENCY, signals._URGENCY, signals._DEADLINE,
                        signals._CITATION)
        for p in markers._patterns
    },
    "switch": arbiter._SWITCH_REQUEST,
    "mention": arbiter._MENTION,
    "commit for": focus_requests.FOR_TURNS,
    "commit to": focus_requests.FOCUS_ON,
    **{f"preference {i}": p for i, p in enumerate(PreferenceClassifier(POLICY)._patterns)},
}
ALL = {**CLASSIFIER_LISTS, **MARKERS}

# Words the patterns are made of, so generated texts hit them often; plus near misses.
VOCABULARY = sorted(
    {word for p in ALL.values() for word in re.findall(r"[a-z0-9]+", p.pattern.lower())}
    | {"according", "cord", "tests", "testing", "datasets", "dont", "sev0", "p0", "10.1000",
       "deploying", "production", "prod", "unrelated", "words", "here", "x"}
)
SEPARATORS = [" ", "  ", ", ", ". ", "\n", "-", "'", "/", "", "? ", "!", ":", "[1]", "://", "_"]

texts = st.lists(
    st.tuples(st.sampled_from(VOCABULARY), st.sampled_from(SEPARATORS)), max_size=14
).map(lambda parts: "".join(w + s for w, s in parts))
cased = st.one_of(texts, texts.map(str.upper), texts.map(str.title), st.text(max_size=40))


@pytest.mark.parametrize(
    ("source", "heads"),
    [
        (r"\bcode\b", {("code", True)}),
        (r"\btests?\b", {("test", False)}),
        (r"\bcompile\w*", {("compile", False)}),
        (r"\bstack ?trace\b", {("stack", False)}),
        (r"\bi feel\b", {("i", True)}),
        (r"\bdrop (?:table|database)\b", {("drop", True)}),
        (r"\bblock(?:ing|ed)\b", {("blocking", True), ("blocked", True)}),
        (r"\b(?:site|db) down\b", {("site", True), ("db", True)}),
        (r"\bvs\.?(?=\s)", {("vs", False)}),
    ],
)
def test_heads_are_the_literal_start_of_each_alternative(source: str, heads: set[object]) -> None:
    assert heads_of(source) == heads


@pytest.mark.parametrize("source", [r"cord", r"!!!", r"\[\d+\]", r"^\s*x", r"\b[\w.-]+\.py"])
def test_a_pattern_that_need_not_start_a_word_has_no_heads(source: str) -> None:
    assert heads_of(source) is None


def test_required_literals_are_read_from_what_every_match_contains() -> None:
    assert required_literals(r"https?://\S+") == ("http", "://")
    assert required_literals(r"\bfoo\b|\bbar\b") == ()
    assert required_literals(re.compile(r"A b", re.IGNORECASE)) == ("a b",)
    # A group and a repeat of at least once must occur; a branch or an optional part need not.
    assert required_literals(r"(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,5}") == ("/", ".")
    assert required_literals(r"(ab)+c(?:x|y)(z)*") == ("ab", "c")


def test_a_text_that_is_not_ascii_makes_every_list_a_candidate() -> None:
    index = HeadIndex({"code": [classifier.DOMAIN_LEXICONS["code"]]})
    assert index.candidates("ſecurity café") == {"code"}
    assert index.candidates("nothing relevant") == set()


@settings(max_examples=400, deadline=None)
@given(cased)
@example("we should deploy the thing to prod today")
@example("Production is DOWN!!! see https://status.example.com [1]")
@example("either this or that, on the other hand vs. the trade-off")
@example("1. first\n2. then\n3. finally")
@example("Rm -rf / and force-push by 5pm")
@example("Let's go back to the billing launch; I prefer tabs for the next 3 turns")
def test_every_list_whose_pattern_matches_is_a_candidate(text: str) -> None:
    index = HeadIndex({name: [pattern] for name, pattern in ALL.items()})
    maybe = index.candidates(text)
    for name, pattern in CLASSIFIER_LISTS.items():  # the classifier matches lower-cased text
        if pattern.search(text.lower()):
            assert name in maybe, (name, text)
    for name, pattern in MARKERS.items():  # markers ignore case on the text as written
        if pattern.search(text):
            assert name in maybe, (name, text)


@settings(max_examples=200, deadline=None)
@given(cased)
def test_markers_report_what_their_patterns_find(text: str) -> None:
    signals._maybe.cache_clear()
    for markers in (signals._EMERGENCY, signals._URGENCY, signals._DEADLINE):
        found = (p.search(text) for p in markers._patterns)
        expected = tuple(m.group(0) for m in found if m is not None)
        assert markers._hits(text) == expected
    expected_count = sum(len(p.findall(text)) for p in signals._CITATION._patterns)
    assert signals._CITATION._count(text) == expected_count


@settings(max_examples=300, deadline=None)
@given(cased)
@example("I really like it")
@example("Why does CI fail? i never saw that")
def test_an_index_of_literal_gated_lists_alone_still_finds_every_match(text: str) -> None:
    # The policy's preference patterns all open with "I": no word heads, only literals (the
    # index then skips splitting the text into words).
    patterns = PreferenceClassifier(POLICY)._patterns
    index = HeadIndex({str(i): [p] for i, p in enumerate(patterns)})
    assert not index._headed
    maybe = index.candidates(text)
    for i, pattern in enumerate(patterns):
        if pattern.search(text):
            assert str(i) in maybe, (pattern.pattern, text)
