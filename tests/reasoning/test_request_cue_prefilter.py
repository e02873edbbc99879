"""The request classifier's set prefilter refuses only cues the ordered scan would refuse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reasoning.requests import _Cue, _words, load_request_classifier

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
