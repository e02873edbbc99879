"""Property tests: any text is a safe query; scores, keys, fusion and decay keep their laws."""

from __future__ import annotations

import string
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.continuity import _fts
from hrm.continuity.learnings import LearningsRepository, decay_score
from hrm.continuity.learnings_types import DecayStrategy, LearningInput, SearchQuery
from hrm.errors import ErrorCode, HRMError
from hrm.storage.sqlite import Database

FTS_SYNTAX = st.sampled_from(
    ['"', "'", "(", ")", "*", "-", "+", ":", "^", "NEAR(", "NEAR/3", "AND", "OR", "NOT", " ", "{",
     "}", "\\", "\x00", "é", "_", "docker", "tests", "ü", "日本"]
)
QUERY_TEXT = st.one_of(
    st.text(max_size=80),
    st.lists(FTS_SYNTAX, max_size=20).map("".join),
    st.lists(FTS_SYNTAX, max_size=12).map(" ".join),
)


@pytest.fixture(scope="module")
def repo() -> Iterator[LearningsRepository]:
    db = Database(":memory:")
    repository = LearningsRepository(db)
    for text in [
        "Running docker compose tests locally needs the NEAR cache",
        "Quotes \"inside\" text and (parentheses) - dashes * stars",
        "日本語のテキストも検索できる",
        "Ünïcödé accents are folded: cafe café",
    ]:
        repository.store_learning(LearningInput(content=text, type="CODEBASE_PATTERN"))
    yield repository
    db.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERY_TEXT)
def test_any_text_is_a_safe_query(repo: LearningsRepository, text: str) -> None:
    try:
        results = repo.search_memories(SearchQuery(text=text, limit=5))
    except HRMError as exc:
        assert exc.code is ErrorCode.QUERY_INVALID
        assert not text.strip()
        return
    assert len(results.results) <= 5
    scores = [r.relevance_score for r in results.results]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


@settings(max_examples=100, deadline=None)
@given(text=QUERY_TEXT)
def test_query_terms_are_words_without_fts_syntax(text: str) -> None:
    terms = _fts.query_terms(text)
    assert len(terms) == len(set(terms)) <= _fts.MAX_QUERY_TERMS
    for term in terms:
        assert term and all(ch.isalnum() or ch == "_" for ch in term)
    expr = _fts.match_any(terms)
    assert expr.count('"') == 2 * len(terms)


WORDS = st.lists(st.text(alphabet=string.ascii_letters + string.digits, min_size=1), min_size=1)


@settings(max_examples=100, deadline=None)
@given(words=WORDS, separator=st.sampled_from([" ", " , ", "; ", " -- ", "\n\t"]))
def test_content_key_ignores_case_punctuation_and_spacing(words: list[str], separator: str) -> None:
    plain = " ".join(words)
    noisy = "  " + separator.join(w.upper() for w in words) + "!!"
    assert _fts.content_key(plain) == _fts.content_key(noisy)
    assert _fts.content_key(plain) != _fts.content_key(plain + " extra")


@given(
    rank=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    terms=st.integers(min_value=0, max_value=40),
    matched=st.integers(min_value=0, max_value=80),
)
def test_relevance_is_within_0_and_1(rank: float, terms: int, matched: int) -> None:
    assert 0.0 <= _fts.bm25_relevance(rank, terms) < 1.0
    assert 0.0 <= _fts.fts_relevance(rank, terms, matched=matched) <= 1.0


@given(
    a=st.floats(min_value=-100, max_value=0, allow_nan=False),
    b=st.floats(min_value=-100, max_value=0, allow_nan=False),
    terms=st.integers(min_value=1, max_value=10),
)
def test_better_bm25_never_gives_lower_relevance(a: float, b: float, terms: int) -> None:
    better, worse = min(a, b), max(a, b)
    assert _fts.bm25_relevance(better, terms) >= _fts.bm25_relevance(worse, terms)


@given(
    age=st.floats(min_value=0, max_value=1e5, allow_nan=False),
    older=st.floats(min_value=0, max_value=1e5, allow_nan=False),
    accesses=st.integers(min_value=0, max_value=10_000),
    age_weight=st.floats(min_value=0, max_value=0.5),
    access_weight=st.floats(min_value=0, max_value=0.5),
)
def test_decay_score_is_bounded_and_falls_with_age(
    age: float, older: float, accesses: int, age_weight: float, access_weight: float
) -> None:
    strategy = DecayStrategy(age_weight=age_weight, access_weight=access_weight, min_score=0.0)
    young = decay_score(strategy, age_days=min(age, older), access_count=accesses)
    old = decay_score(strategy, age_days=max(age, older), access_count=accesses)
    assert 0.0 <= old <= young <= 1.0
    assert decay_score(strategy, age_days=age, access_count=accesses + 1) >= decay_score(
        strategy, age_days=age, access_count=accesses
    )


@given(marked=st.lists(st.tuples(st.text(alphabet="abc ", max_size=5), st.booleans()), max_size=8))
def test_extract_highlights_returns_marked_spans(marked: list[tuple[str, bool]]) -> None:
    text = "".join(
        f"{_fts.HIGHLIGHT_OPEN}{part}{_fts.HIGHLIGHT_CLOSE}" if hit else part for part, hit in marked
    )
    expected = list(dict.fromkeys(p.strip() for p, hit in marked if hit and p.strip()))
    assert _fts.extract_highlights(text) == expected
