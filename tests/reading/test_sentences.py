"""Sentence spans: offsets every reader and the rest of the message depend on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.reading import sentence_spans


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        pytest.param("", [], id="empty"),
        pytest.param("  \n\t ", [], id="whitespace"),
        pytest.param("hi", ["hi"], id="one-word"),
        pytest.param("Decided: Netlify. Ship it!", ["Decided: Netlify.", "Ship it!"], id="two"),
        pytest.param("use km, e.g. 3.5 km; ok?", ["use km, e.g. 3.5 km;", "ok?"], id="abbrev"),
        pytest.param("line one\nline two", ["line one", "line two"], id="lines"),
        pytest.param("wait... what?", ["wait...", "what?"], id="ellipsis"),
        pytest.param("Is it v2.0?No.", ["Is it v2.0?No."], id="no-space-no-split"),
    ],
)
def test_sentences_split_where_a_reader_expects(text: str, sentences: list[str]) -> None:
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences


@given(st.text(max_size=400))
def test_spans_are_ordered_trimmed_and_inside_the_text(text: str) -> None:
    spans = sentence_spans(text)
    last = 0
    for start, end in spans:
        assert last <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        last = end


@given(st.text(max_size=400))
def test_the_rules_split_sentences_as_every_reader_does(text: str) -> None:
    from hrm.reading.rules.preference_scope import sentences

    expected = [text[a:b].rstrip(";").rstrip() for a, b in sentence_spans(text, len(text))]
    assert list(sentences(text)) == [s for s in expected if s]


def test_a_title_before_a_name_ends_no_sentence() -> None:
    from hrm.reading.rules.preference_scope import sentences

    said = "pls remember my dentist is dr. okafor on 5th street. Thanks!"
    assert list(sentences(said)) == ["pls remember my dentist is dr. okafor on 5th street.",
                                     "Thanks!"]  # fmt: skip


def test_a_huge_message_is_read_by_its_head() -> None:
    text = "word. " * 200_000
    spans = sentence_spans(text)
    assert spans and spans[-1][1] <= 20_000


def test_slots_record_only_what_differs_from_their_defaults() -> None:
    from hrm.reading import Slots

    assert Slots().filled() == {}
    assert Slots(what="my cat", sure=False).filled() == {"what": "my cat", "sure": False}
    assert Slots(hedged=True, turns=2).filled() == {"turns": 2, "hedged": True}
