"""Requests about a problem itself: resolve it, park it (D82)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.reading.rules.problems import (
    ProblemRequest,
    read_problem_intents,
    read_problem_request,
)
from hrm.reading.sentences import sentence_spans
from hrm.reading.types import IntentKind, ReadingContext


@pytest.mark.parametrize(
    ("text", "kind", "ref"),
    [
        ("Can we mark the webhook problem as done?", "resolve", "webhook"),
        ("Mark this as resolved.", "resolve", None),
        ("OK, mark it done", "resolve", None),
        ("Let's call it done for the offsite.", "resolve", "offsite"),
        ("Close the webhook issue", "resolve", "webhook"),
        ("Resolve this problem please", "resolve", None),
        ("We're done with this one, thanks!", "resolve", None),
        ("I'm done with the webhook issue.", "resolve", "webhook"),
        ("This can be closed.", "resolve", None),
        ("The webhook issue can be marked as done.", "resolve", "webhook"),
        ("Thanks! Mark the offsite as finished. What's next?", "resolve", "offsite"),
        ("Let's park the offsite for now.", "park", "offsite"),
        ("Put this on hold.", "park", None),
        ("The offsite can wait.", "park", "offsite"),
        ("Drop it for now", "park", None),
    ],
)
def test_reads_a_request_to_resolve_or_park(text: str, kind: str, ref: str | None) -> None:
    request = read_problem_request(text)
    assert request is not None and (request.kind, request.ref) == (kind, ref)
    assert request.clause in text


@pytest.mark.parametrize(
    "text",
    [
        "Resolve the merge conflict in main",  # help with the work, not its status
        "Close it.",  # a file, a pull request
        "Close the PR",
        "I marked the tests as skipped",
        "Mark the test as xfail",
        "Let's call it a day",  # a goodbye (D78)
        "I'm done for today",
        "Call the function done_callback",
        "How do I close the issue on GitHub?",
        "Never mind.",  # takes back what was said; pauses nothing
        "Forget that.",
        "I can wait",
        "The offsite can wait, the webhook is failing",  # turns to something (D81)
    ],
)
def test_reads_no_request_where_none_is_made(text: str) -> None:
    assert read_problem_request(text) is None


@given(st.text(max_size=400))
@settings(max_examples=300)
def test_any_text_makes_no_request_or_one_it_says(text: str) -> None:
    request = read_problem_request(text)
    assert request is None or (
        isinstance(request, ProblemRequest)
        and request.clause in text
        and (request.ref is None or request.ref.strip() != "")
    )


@pytest.mark.parametrize(
    "text",
    ["What's still open?", "What is on my plate?", "what are we working on", "OK, what's open?",
     "List my open problems.", "Show me all the tasks please", "What problems are still open?"],
)
def test_reads_a_question_about_what_is_open(text: str) -> None:
    request = read_problem_request(text)
    assert request is not None and request.kind == "list" and request.ref is None


@pytest.mark.parametrize(
    "text",
    ["What's open in the PR?", "What is left to do on the migration?", "What's left?",
     "What are the open questions for the launch?", "List the files in the repo"],
)
def test_a_question_about_the_work_asks_for_no_list(text: str) -> None:
    assert read_problem_request(text) is None


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("park the cover letter, I need to fix my bike first", "cover letter"),
        ("Please shelve the cover letter.", "cover letter"),
        ("ok pause the cover letter for a sec", "cover letter"),
        ("park the car in the garage", None),  # no open problem is the car
        ("how do I pause the video?", None),
    ],
)
def test_an_imperative_pause_of_an_open_problem_is_a_park(text: str, ref: str | None) -> None:
    # D418: "park the cover letter, I need to fix my bike first" was read as nothing.
    context = ReadingContext(open_problems=("I'm writing a cover letter for a data analyst job",))
    found = read_problem_intents(text, sentence_spans(text), context)
    parks = [i.slots.ref for i in found if i.kind is IntentKind.PARK]
    assert parks == ([ref] if ref else [])


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("the report is done", "report"),
        ("I'm done with the cover letter, thanks", "cover letter"),
        ("ok the cover letter is finally finished", "cover letter"),
        ("the first draft is done, what next?", None),  # a part of the work, not a problem
        ("my laundry is done", None),
    ],
)
def test_saying_an_open_problem_is_finished_is_asked_about(text: str, ref: str | None) -> None:
    # D422: "the report is done" resolved nothing and asked nothing.
    context = ReadingContext(open_problems=(
        "I'm writing a cover letter for a data analyst job", "Quarterly report for the board",
    ))
    found = read_problem_intents(text, sentence_spans(text), context)
    resolves = [(i.slots.ref, i.confidence) for i in found if i.kind is IntentKind.RESOLVE]
    assert resolves == ([(ref, 0.6)] if ref else [])
