"""Guards: a question or a request is never a preference, a fact to keep or a decision."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.reading import IntentKind
from hrm.reading.guards import GUARD_CHARS, asks_something, barred_kinds

NEVER = {IntentKind.PREFERENCE, IntentKind.FACT, IntentKind.DECISION}
NOT_ASKED = NEVER | {
    IntentKind.RESOLVE, IntentKind.PARK, IntentKind.FORGET, IntentKind.FOCUS, IntentKind.SET_ASIDE,
}
"""A sentence that opens as a question, not as a favour, also closes, parks, forgets nothing."""
TOLD = {IntentKind.FACT, IntentKind.DECISION}
"""A sentence asking to be told something states no fact and no decision (D408)."""


@pytest.mark.parametrize(
    ("sentence", "barred"),
    [
        pytest.param("I hate how slow webpack is, what are alternatives?", NEVER, id="issue-webpack"),
        pytest.param("I prefer to know why this fails before patching it, can you explain the traceback?", NEVER, id="issue-traceback"),
        pytest.param("I prefer tabs but what do most projects use", NEVER, id="midway-what"),
        pytest.param("do you prefer vim or emacs", NOT_ASKED, id="opens-as-question"),
        pytest.param("Is this resolved?", NOT_ASKED, id="asks-about-the-state"),
        pytest.param("What documents do I need for that?", NOT_ASKED, id="wh-question"),
        pytest.param("Can you forget that I prefer tabs?", NEVER, id="favour-may-forget"),
        pytest.param("could we park this for now?", NEVER, id="favour-may-park"),
        pytest.param("can u always use metric", NEVER, id="can-u"),
        pytest.param("I love rust, any tips for the borrow checker", NEVER, id="any-tips"),
        pytest.param("Can you remember that the deploy key rotates monthly?", NEVER - {IntentKind.FACT}, id="keep-request-may-be-fact"),
        pytest.param("pls use 2-space indentation in all code u send me", set(), id="instruction"),
        pytest.param("When you give me recipes use grams not cups", set(), id="when-as-condition"),
        pytest.param("My preference: metric units, always.", set(), id="statement"),
        pytest.param("remember that our staging db is db2", set(), id="fact"),
        # asked to be told a decision or a fact, not stating one (D408)
        pytest.param("Summarise what we decided about the cache layer", TOLD, id="summarise"),
        pytest.param("remind me what we agreed on pricing", TOLD, id="remind-me"),
        pytest.param("ok so pls recap the decisions for the launch", TOLD, id="recap"),
        pytest.param("Show me what we decided", TOLD, id="show-me"),
        pytest.param("Tell me the time complexity in every answer from now on", TOLD, id="instruction-may-be-preference"),
        pytest.param("Summarize what we decided?", NEVER, id="told-and-asked"),
        pytest.param("We decided to use Redis for the cache", set(), id="decision"),
        pytest.param("Listing every flag was a mistake", set(), id="not-the-verb"),
    ],
)
def test_questions_and_requests_bar_canon_intents(sentence: str, barred: set[IntentKind]) -> None:
    assert barred_kinds(sentence) == barred


@given(st.text(max_size=300))
def test_guards_never_raise_and_agree(text: str) -> None:
    barred = barred_kinds(text)
    if asks_something(text):
        assert barred >= NEVER - {IntentKind.FACT}
    else:
        assert barred <= TOLD


def test_guards_read_a_bounded_head() -> None:
    """A question mark far into a paste does not make its first line a question."""
    text = "use tabs always " + "x" * GUARD_CHARS + "?"
    assert barred_kinds(text) == set()
