from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hrm._text import shorten


def test_a_title_is_cut_after_a_whole_word_and_marked() -> None:
    title = "How do I configure the postgres connection pool for the billing service?"
    assert shorten(title, 60) == "How do I configure the postgres connection pool for the…"
    assert shorten(title, 200) == title


def test_text_that_fits_comes_back_on_one_line() -> None:
    assert shorten("two\n  lines", 20) == "two lines"


def test_one_long_word_is_cut_inside_it() -> None:
    assert shorten("supercalifragilisticexpialidocious", 10) == "supercali…"


def test_trailing_punctuation_is_not_left_before_the_mark() -> None:
    assert shorten("first part, second part and more", 13) == "first part…"


@given(st.text(), st.integers(min_value=0, max_value=120))
def test_never_longer_than_the_limit_and_always_a_prefix(text: str, limit: int) -> None:
    flat = " ".join(text.split())
    short = shorten(text, limit)
    assert len(short) <= limit
    if len(flat) <= limit:
        assert short == flat
    elif limit > 1:
        assert short.endswith("…")
        assert flat.startswith(short[:-1])
