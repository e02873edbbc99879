"""Recognising a model that loops, without ever cutting an answer that does not."""

from __future__ import annotations

import queue
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.llm.local import _drain
from hrm.llm.repetition import loop_start

# The answer SmolLM2 gave to "Let's plan the database migration for the billing service",
# seed 2, before the guard: it ran to max_tokens (1,024 tokens, eleven seconds) like this.
SMOLLM_LOOP = (
    "Here's a plan for the database migration:\n\n"
    "1. **Back up**: take a snapshot first.\n"
    + "   - **Create a new database with the migration script**:\n" * 3
    + "   - **Update the database**:\n"
    + "   - **Create a new database with the migration script**:\n" * 4
)


def test_a_loop_of_lines_is_cut_after_its_first_copy() -> None:
    cut = loop_start(SMOLLM_LOOP)
    assert cut is not None
    kept = SMOLLM_LOOP[:cut]
    assert kept.endswith("   - **Create a new database with the migration script**:\n")
    assert kept.count("Create a new database") == 1
    assert kept.startswith("Here's a plan")


def test_a_sentence_looping_on_one_line_keeps_one_whole_sentence() -> None:
    text = "Hello there. " + "I like cats very much. " * 4 + "I like"
    cut = loop_start(text)
    assert cut is not None
    assert text[:cut] == "Hello there. I like cats very much."


def test_numbered_copies_are_copies() -> None:
    text = "Steps:\n" + "".join(f"{i}. Back up the database first\n" for i in range(1, 7))
    cut = loop_start(text)
    assert cut is not None and text[:cut] == "Steps:\n1. Back up the database first\n"


def test_answers_that_repeat_legitimately_are_left_alone() -> None:
    table = "| a | b | c | d | e | f |\n" + "|---|---|---|---|---|---|\n" * 8
    assert loop_start(table) is None  # no words in what repeats
    options = "Option A\nPros: fast\nCons: costly\nOption B\nPros: fast\nCons: costly\n"
    assert loop_start(options) is None  # four kinds of line in the last six
    code = "def f():\n    x = 1\n    y = 2\n    return x\n" * 2
    assert loop_start(code) is None
    thrice = "We should test it. " * 3  # short spans need four copies
    assert loop_start(thrice) is None
    assert loop_start("") is None and loop_start("one line, unfinished") is None


_word = st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


@st.composite
def _span(draw: st.DrawFn) -> str:
    """A span worth repeating: words (at least two) and an ending."""
    words = draw(st.lists(_word, min_size=2, max_size=12))
    span = " ".join(words) + draw(st.sampled_from([". ", "\n", ", ", "! "]))
    return span if len(span) >= 12 else span * (12 // len(span) + 1)


@settings(max_examples=300)
@given(prefix=st.text(max_size=300), span=_span(), copies=st.integers(4, 12))
def test_any_span_said_four_times_at_the_end_is_a_loop(prefix: str, span: str, copies: int) -> None:
    text = prefix + span * copies
    cut = loop_start(text)
    assert cut is not None
    assert cut <= len(text) - 12  # something repeated is dropped
    assert text[:cut].startswith(prefix[: max(0, len(prefix) - len(span))])


@settings(max_examples=300)
@given(
    lines=st.lists(
        st.lists(_word, min_size=2, max_size=8).map(" ".join), min_size=1, max_size=40, unique=True
    ),
    ending=st.sampled_from(["\n", "", " and so"]),
)
def test_an_answer_whose_lines_all_differ_is_never_cut(lines: list[str], ending: str) -> None:
    text = "\n".join(f"- {line}" for line in lines) + ending
    assert loop_start(text) is None


@given(text=st.text(max_size=2000))
def test_any_text_gives_a_cut_inside_it_or_none(text: str) -> None:
    cut = loop_start(text)
    assert cut is None or 0 < cut < len(text)


def test_the_local_stream_stops_the_decode_at_a_loop_and_keeps_one_copy() -> None:
    events: queue.Queue[tuple[str, object]] = queue.Queue()
    stop = threading.Event()
    for line in SMOLLM_LOOP.splitlines(keepends=True):
        events.put(("c", {"id": "r1", "choices": [{"delta": {"content": line}}]}))
    events.put(("end", None))
    chunks = list(_drain(events, None, stop=stop))  # type: ignore[arg-type]
    assert stop.is_set()  # the decode is told to stop at the loop, not at max_tokens
    final = chunks[-1]
    assert final.done and final.finish_reason == "repetition"
    assert final.accumulated == SMOLLM_LOOP[: loop_start(SMOLLM_LOOP)].rstrip()
    assert not events.empty()  # the lines after the loop was recognised were never read
