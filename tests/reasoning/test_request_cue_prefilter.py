"""The request classifier's prefilters (the set check, the cue index) refuse only cues the
ordered scan would refuse, and its run finder finds what comparing every word finds."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hrm.reading.pasted import spoken
from hrm.reasoning.request_set import load_request_set
from hrm.reasoning.requests import (
    RequestClassifier,
    _Class,
    _Cue,
    _matches,
    _positions,
    _words,
    load_request_classifier,
)

_VOCABULARY = ["fix", "the", "deploy", "deploying", "prod", "is", "down", "plan", "a", "migration",
               "write", "tests", "for", "review", "this", "pr", "urgent", "now", "step", "then"]
_CUE_WORD = st.sampled_from([*_VOCABULARY, "deploy*", "migrat*", "test*", "nothing"])


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(_VOCABULARY), max_size=30),
    parts=st.lists(st.lists(_CUE_WORD, min_size=1, max_size=3).map(tuple), min_size=1, max_size=3),
)
def test_the_prefilter_never_changes_whether_a_cue_is_found(
    words: list[str], parts: list[tuple[str, ...]]
) -> None:
    cue = _Cue("cue", tuple(parts), 1.0)
    assert cue.found_in(words, frozenset(words)) == cue.found_in(words)


def test_every_shipped_cue_reads_the_same_with_the_prefilter() -> None:
    messages = [
        "Prod is down, the deploy broke checkout!", "Plan a migration from MySQL to Postgres",
        "Write tests for the billing-service-production module, then review this PR",
        "What is the capital of France?", "step by step: set up CI, then deploy to staging",
    ]
    classifier = load_request_classifier()
    for message in messages:
        words = _words(message)
        for cls in classifier._classes:
            for cue in cls.cues:
                assert cue.found_in(words, frozenset(words)) == cue.found_in(words), cue.text


# ── the cue index and the run finder (D381) ───────────────────────────────


def _positions_by_every_word(words: list[str], run: tuple[str, ...]) -> list[int]:
    """The run finder as it was before D381: every word compared through `_matches`."""
    n = len(run)
    return [
        i for i in range(len(words) - n + 1) if all(_matches(words[i + k], run[k]) for k in range(n))
    ]


_FEW_WORDS = st.sampled_from(["deploy", "deploying", "prod", "migration", "the"])
"""A small vocabulary, so that runs of cue words are often found, at the end too."""


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(_FEW_WORDS | st.sampled_from(_VOCABULARY), max_size=12),
    run=st.lists(_CUE_WORD | _FEW_WORDS, min_size=1, max_size=3).map(tuple),
)
@example(words=["the", "deploying"], run=("deploy*",))
@example(words=["the", "deploy", "prod"], run=("deploy", "prod"))
@example(words=["prod"], run=("prod", "prod"))
@example(words=[], run=("the",))
def test_the_run_finder_finds_what_comparing_every_word_finds(
    words: list[str], run: tuple[str, ...]
) -> None:
    assert _positions(words, run) == _positions_by_every_word(words, run)


_CUES = st.lists(
    st.lists(st.lists(_CUE_WORD, min_size=1, max_size=3).map(tuple), min_size=1, max_size=3),
    min_size=1,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(
    tables=st.lists(_CUES, min_size=1, max_size=3),
    messages=st.lists(st.lists(st.sampled_from(_VOCABULARY), max_size=25), min_size=1, max_size=4),
)
def test_the_cue_index_finds_exactly_the_cues_a_full_scan_finds(
    tables: list[list[list[tuple[str, ...]]]], messages: list[list[str]]
) -> None:
    classes = tuple(
        _Class(
            f"c{number}",
            1.0,
            tuple(_Cue(f"c{number}-{i}", tuple(parts), 1.0) for i, parts in enumerate(cues)),
        )
        for number, cues in enumerate(tables)
    )
    classifier = RequestClassifier(classes)
    for words in messages:  # the same classifier again and again: its word memory is used
        reading = classifier.classify(" ".join(words))
        for cls in classes:
            expected = [cue.text for cue in cls.cues if cue.found_in(words)]
            assert reading.cues[cls.name] == expected
            assert reading.scores[cls.name] == float(len(expected))


def test_every_labelled_request_reads_as_a_full_scan_of_the_shipped_tables() -> None:
    classifier = load_request_classifier()
    requests = load_request_set(Path(__file__).parent / "data" / "requests.tsv")
    assert len(requests) > 100
    for request in requests:
        reading = classifier.classify(request.text)
        words = _words(spoken(request.text))[:400]
        for cls in classifier._classes:
            scanned = [cue.text for cue in cls.cues if cue.found_in(words)]
            indexed = [c for c in reading.cues[cls.name] if not c.startswith(("shape:", "hint:"))]
            assert indexed == scanned, (request.text, cls.name)
