"""Hybrid search lets learnings stored next to each other in a session lift each other.

A small deterministic embedder (hashed words) stands in for MiniLM so the scores are known;
the real model's effect is measured on LoCoMo in `bench/bench_locomo.py`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

import pytest

from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput, SearchFilters, SearchQuery
from hrm.storage.sqlite import Database

np = pytest.importorskip("numpy")

DIM = 256


class HashedWords:
    """Unit bag-of-words vectors: cosine = shared words, no meaning."""

    model_id = "test/hashed-words"
    dimension = DIM

    def encode(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out


@pytest.fixture
def repo(ticking_clock: Callable[[], datetime]) -> Iterator[LearningsRepository]:
    db = Database(":memory:")
    yield LearningsRepository(db, embedder=HashedWords(), clock=ticking_clock)
    db.close()


def learn(repo: LearningsRepository, content: str, session: str | None, kind: str = "CODEBASE_PATTERN") -> str:
    return str(repo.store_learning(LearningInput(content=content, type=kind, session_id=session)))


def ranked(repo: LearningsRepository, text: str, **filters: Any) -> list[str]:
    found = repo.search_memories(
        SearchQuery(text=text, limit=10, filters=SearchFilters(**filters) if filters else None)
    )
    return [r.learning.content for r in found.results]


def test_a_weak_match_stored_next_to_a_strong_one_outranks_an_equal_stranger(
    repo: LearningsRepository,
) -> None:
    learn(repo, "tokenizer guard added there", "other-session")  # stored first: wins ties
    learn(repo, "parser crash on empty tokenizer input", "debugging")
    learn(repo, "tokenizer guard added here", "debugging")
    order = ranked(repo, "parser crash tokenizer guard")
    assert order.index("tokenizer guard added here") < order.index("tokenizer guard added there")


def test_a_neighbour_that_matches_nothing_is_never_returned(repo: LearningsRepository) -> None:
    learn(repo, "banana bread recipe with walnuts", "debugging")
    learn(repo, "parser crash on empty tokenizer input", "debugging")
    learn(repo, "tokenizer guard added here", "debugging")
    assert not any("banana" in content for content in ranked(repo, "parser crash tokenizer"))


def test_neighbours_are_counted_among_learnings_the_filters_keep(
    repo: LearningsRepository,
) -> None:
    learn(repo, "tokenizer guard added there", "other-session")
    learn(repo, "parser crash on empty tokenizer input", "debugging")
    for n in range(3):  # filtered out below: between the two, but not counted
        learn(repo, f"unrelated failed attempt number {n}", "debugging", "FAILED_APPROACH")
    learn(repo, "tokenizer guard added here", "debugging")
    kept = ranked(repo, "parser crash tokenizer guard", types=["CODEBASE_PATTERN"])
    assert kept.index("tokenizer guard added here") < kept.index("tokenizer guard added there")
    every = ranked(repo, "parser crash tokenizer guard")  # three apart: no longer near
    assert every.index("tokenizer guard added there") < every.index("tokenizer guard added here")


def test_learnings_without_a_session_lend_nothing(repo: LearningsRepository) -> None:
    learn(repo, "tokenizer guard added there", None)
    learn(repo, "parser crash on empty tokenizer input", None)
    learn(repo, "tokenizer guard added here", None)
    order = ranked(repo, "parser crash tokenizer guard")
    assert order.index("tokenizer guard added there") < order.index("tokenizer guard added here")


def test_relevance_stays_within_0_1_with_the_best_first(repo: LearningsRepository) -> None:
    for n in range(6):
        learn(repo, f"parser crash tokenizer guard step {n}", "debugging")
    found = repo.search_memories(SearchQuery(text="parser crash tokenizer guard", limit=10))
    scores = [r.relevance_score for r in found.results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores) and scores[0] == pytest.approx(1.0)
