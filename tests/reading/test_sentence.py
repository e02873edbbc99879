"""The exemplar tier on the real sentence model: the issue's paraphrases, its guards, and
bad input (needs the `embeddings` extra)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.continuity.embeddings import available
from hrm.reading import Band, Bands, IntentKind, ReadingContext, sentence_spans
from hrm.reading.sentence import ExemplarReader

pytestmark = [
    pytest.mark.embeddings,
    pytest.mark.skipif(not available(), reason="needs the embeddings extra"),
]

K = IntentKind
BANDS = Bands()


def kinds(reader: ExemplarReader, text: str, context: ReadingContext | None = None) -> set[IntentKind]:
    intents = reader.read(text, sentence_spans(text), context or ReadingContext())
    return {i.kind for i in intents if BANDS.of(i.confidence) is not Band.IGNORE}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        pytest.param("for the next two turns only talk about the webhook", K.FOCUS, id="two-turns"),
        pytest.param("concentrate on the webhook, next 3 messages", K.FOCUS, id="concentrate"),
        pytest.param("My preference: metric units, always.", K.PREFERENCE, id="preference-colon"),
        pytest.param("Where we were?", K.RESUME, id="where-we-were"),
        pytest.param("what were we working on before?", K.RESUME, id="working-on-before"),
        pytest.param("Decided: Netlify.", K.DECISION, id="decided"),
        pytest.param("Postgres it is.", K.DECISION, id="it-is"),
        pytest.param("We agreed the release goes out on the 14th", K.DECISION, id="agreed"),
        pytest.param("delete that from your memory", K.FORGET, id="delete-from-memory"),
        pytest.param("forget about my cat", K.FORGET, id="forget-about"),
        pytest.param("This is resolved.", K.RESOLVE, id="resolved"),
        pytest.param("Problem is solved now, you can close it", K.RESOLVE, id="solved-close"),
        pytest.param("pls use 2-space indentation in all code u send me", K.PREFERENCE, id="indentation"),
    ],
)
def test_the_issues_paraphrases_are_read(exemplar_reader: ExemplarReader, text: str, kind: IntentKind) -> None:
    assert kinds(exemplar_reader, text) == {kind}


OPENINGS = ["ok ", "OK so ", "So, ", "Actually, ", "hey, ", "Unrelated: ", "Quick question, "]


@pytest.mark.parametrize("opening", OPENINGS)
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        pytest.param("forget the password I just gave you", K.FORGET, id="forget"),
        pytest.param("forget my password", K.FORGET, id="forget-mine"),
        pytest.param("remember that our staging box is stg-04", K.FACT, id="fact"),
        pytest.param("concentrate on the webhook, next 3 messages", K.FOCUS, id="focus"),
    ],
)
def test_words_that_open_a_sentence_do_not_change_its_reading(
    exemplar_reader: ExemplarReader, opening: str, text: str, kind: IntentKind
) -> None:
    """"ok forget the password I just gave you" fell below the ask band while "forget the
    password I just gave you" was read: the tier reads what the sentence says (D406)."""
    assert kinds(exemplar_reader, opening + text) == kinds(exemplar_reader, text) == {kind}


@pytest.mark.parametrize("opening", OPENINGS)
def test_a_kept_fact_keeps_what_is_stated_not_its_opening(
    exemplar_reader: ExemplarReader, opening: str
) -> None:
    text = opening + "pls remember that our staging box is stg-04"
    (intent,) = exemplar_reader.read(text, sentence_spans(text), ReadingContext())
    assert intent.slots.statement == "our staging box is stg-04"


@pytest.mark.parametrize(
    "text",
    [
        "I hate how slow webpack is, what are alternatives?",
        "I prefer to know why this fails before patching it, can you explain the traceback?",
    ],
)
def test_a_question_with_preference_words_is_no_preference(
    exemplar_reader: ExemplarReader, text: str
) -> None:
    assert K.PREFERENCE not in kinds(exemplar_reader, text)


def test_an_answer_needs_its_question(exemplar_reader: ExemplarReader) -> None:
    assert kinds(exemplar_reader, "yep") == set()
    assert kinds(exemplar_reader, "yep", ReadingContext(pending="preference")) == {K.YES}
    assert kinds(exemplar_reader, "later", ReadingContext(pending="switch")) == {K.QUEUE}


def test_slots_come_with_the_intent(exemplar_reader: ExemplarReader) -> None:
    text = "Keep focus on onboarding emails for ten messages"
    (intent,) = exemplar_reader.read(text, sentence_spans(text), ReadingContext())
    assert (intent.kind, intent.slots.turns, intent.reader) == (K.FOCUS, 10, "exemplars")


def test_thanks_and_goodbye_in_one_sentence_are_both_read(exemplar_reader: ExemplarReader) -> None:
    text = "thanks, bye!"
    intents = exemplar_reader.read(text, sentence_spans(text), ReadingContext())
    assert {i.kind for i in intents} == {K.THANKS, K.GOODBYE}
    assert intents[0].span[1] <= intents[1].span[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_text_is_read_without_error_inside_its_spans(exemplar_reader: ExemplarReader, text: str) -> None:
    spans = sentence_spans(text)
    intents = exemplar_reader.read(text, spans, ReadingContext(pending="switch"))
    last = 0
    for intent in intents:
        assert any(a <= intent.span[0] < intent.span[1] <= b for a, b in spans)
        assert intent.span[0] >= last and 0.0 <= intent.confidence <= 1.0
        last = intent.span[1]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param(" \n\t ", id="whitespace"),
        pytest.param("\x00\x01\x1b[31mforget that\x07", id="control-characters"),
        pytest.param("forget \ud800 that \udfff", id="lone-surrogates"),
        pytest.param(b"forget \xff\xfe that".decode("utf-8", "surrogateescape"), id="invalid-utf8-escaped"),
        pytest.param("x" * 1_000_000, id="one-megabyte-word"),
        pytest.param("please forget about my cat. " * 40_000, id="one-megabyte-sentences"),
    ],
)
def test_bad_input_gives_an_empty_or_partial_reading(exemplar_reader: ExemplarReader, text: str) -> None:
    intents = exemplar_reader.read(text, sentence_spans(text), ReadingContext())
    assert all(0 <= i.span[0] < i.span[1] <= len(text) for i in intents)
