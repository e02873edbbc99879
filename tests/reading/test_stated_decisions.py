"""A decision the person states about the work (D88)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.reading.rules.decisions import read_stated_decision


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ("Let's go with Decimal for the invoice totals.", "go with Decimal for the invoice totals"),
        ("OK, we'll use Postgres 16 for the new cluster", "use Postgres 16 for the new cluster"),
        ("We decided to drop the legacy API in v3.", "drop the legacy API in v3"),
        ("We have decided that the API stays REST", "the API stays REST"),
        ("Decision: ship on Tuesday", "ship on Tuesday"),
        ("Go with option B.", "go with option B"),
        ("We're going with the blue design", "go with the blue design"),
        ("I'll stick with pytest.", "stick with pytest"),
        ("our team agreed to freeze the API until June", "freeze the API until June"),
        ("Thanks. Let's go with Lisbon for the offsite. Can you find venues?",
         "go with Lisbon for the offsite"),
        # a final call (D455)
        ("final answer: vineyard on june 14", "vineyard on june 14"),
        ("ok, our final choice is Hetzner", "Hetzner"),
        ("ok we go with a range condition instead of date()",
         "go with a range condition instead of date()"),
    ],
)
def test_reads_a_stated_decision(text: str, decision: str) -> None:
    stated = read_stated_decision(text)
    assert stated is not None and stated.decision == decision


@pytest.mark.parametrize(
    "text",
    [
        "Should we go with option B?",  # a question
        "We use Postgres.",  # how things are
        "Let's use it",  # names nothing
        "How do I use pandas?",
        "Let's keep going and chase our dreams!",  # "keep" is no choice
        "Summarise what we decided about the cache layer",
        "I want to keep it simple",
        "my manager decided to cancel the project",  # news of someone else's decision
        "lets pick up the thread from before",  # "pick up" resumes, it chooses nothing
        "is that your final answer?",
        "the final chapter is done",
    ],
)
def test_reads_no_decision_where_none_is_stated(text: str) -> None:
    assert read_stated_decision(text) is None


@given(st.text(max_size=300))
def test_any_text_states_no_decision_or_one_made_of_its_words(text: str) -> None:
    stated = read_stated_decision(text)
    if stated is not None:
        assert stated.sentence in text
        assert stated.decision.split()[-1].strip("…") in text or stated.decision.endswith("…")
