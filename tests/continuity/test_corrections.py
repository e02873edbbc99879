"""A correction is a new version that supersedes; a repeat (typos included) is a duplicate.

The same rule for `store_learning` and `import_` (issue 31 item 5, D234).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.continuity._corrections import Closeness, compare, is_typo, typo_jaccard
from hrm.continuity._fts import token_set
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput, SearchQuery
from hrm.errors import ErrorCode, HRMError
from hrm.storage.sqlite import Database

BASE = "the beta checkout flag is enabled in staging for the payments service this week"


@pytest.fixture
def repo() -> Iterator[LearningsRepository]:
    with Database(":memory:") as db:
        yield LearningsRepository(db)


def learn(repo: LearningsRepository, content: str) -> str:
    return repo.store_learning(LearningInput(content=content, type="CODEBASE_PATTERN")).id


def found(repo: LearningsRepository, text: str) -> list[str]:
    return [r.learning.content for r in repo.search_memories(SearchQuery(text=text)).results]


@pytest.mark.parametrize(
    ("new", "closeness"),
    [
        pytest.param(BASE.replace("enabled", "disabled"), Closeness.CORRECTION, id="antonym"),
        pytest.param(BASE.replace("is enabled", "is not enabled"), Closeness.CORRECTION,
                     id="negation"),
        pytest.param(BASE.replace("this week", "for 2 weeks"), Closeness.CORRECTION,
                     id="number"),
        pytest.param(BASE.replace("staging", "production"), Closeness.DISTINCT,
                     id="replaced-word"),
        pytest.param(BASE.replace("enabled", "switched on"), Closeness.DISTINCT,
                     id="reworded"),
        pytest.param(BASE.replace("payments", "paymnets"), Closeness.REPEAT, id="typo"),
        pytest.param(BASE + " too", Closeness.REPEAT, id="word-added"),
        pytest.param(BASE.replace("the beta", "beta"), Closeness.REPEAT, id="word-dropped"),
    ],
)  # fmt: skip
def test_a_close_learning_repeats_or_corrects(new: str, closeness: Closeness) -> None:
    assert compare(token_set(new), token_set(BASE)) is closeness


@pytest.mark.parametrize(
    ("left", "right", "typo"),
    [("recieve", "receive", True), ("paymnets", "payments", True), ("enabled", "disabled", False),
     ("here", "there", False), ("node18", "node20", False), ("cat", "cut", False)],
)  # fmt: skip
def test_only_a_mistyped_word_counts_as_the_same_word(left: str, right: str, typo: bool) -> None:
    assert is_typo(left, right) is typo


_words = st.frozensets(st.text("abcdefgh", min_size=1, max_size=8), max_size=12)


@given(_words, _words)
def test_typo_overlap_is_a_symmetric_fraction_at_least_the_plain_one(
    left: frozenset[str], right: frozenset[str]
) -> None:
    alike = typo_jaccard(left, right)
    assert 0.0 <= alike <= 1.0
    plain = len(left & right) / len(left | right) if left | right else 1.0
    assert alike >= plain - 1e-9
    assert typo_jaccard(left, left) == 1.0 and compare(left, left) is Closeness.REPEAT


def test_an_older_imported_correction_is_superseded_by_the_stored_one(
    repo: LearningsRepository,
) -> None:
    old = learn(repo, BASE)
    items = [{"content": BASE.replace("is enabled", "is not enabled"),
              "type": "CODEBASE_PATTERN", "created_at": "2000-01-01T00:00:00Z"}]  # fmt: skip
    assert repo.import_(items) == (1, 0)
    assert repo.get(old).status == "active"
    assert found(repo, "beta checkout flag staging") == [BASE]


def test_a_correction_is_stored_and_supersedes_the_old_learning(repo: LearningsRepository) -> None:
    old = learn(repo, BASE)
    new = learn(repo, BASE.replace("enabled", "disabled"))
    assert new != old
    assert repo.get(old).status == "superseded" and repo.get(new).status == "active"
    assert found(repo, "beta checkout flag staging") == [BASE.replace("enabled", "disabled")]


def test_a_typo_variant_is_a_duplicate(repo: LearningsRepository) -> None:
    old = learn(repo, BASE)
    with pytest.raises(HRMError) as info:
        learn(repo, BASE.replace("payments", "paymnets"))
    assert info.value.code is ErrorCode.DUPLICATE_DETECTED
    assert info.value.context["duplicate_id"] == old


def test_import_skips_repeats_and_keeps_the_newer_of_a_correction(
    repo: LearningsRepository,
) -> None:
    old = learn(repo, BASE)
    items = [
        {"content": BASE.replace("payments", "paymnets"), "type": "CODEBASE_PATTERN"},
        {"content": BASE.replace("enabled", "disabled"), "type": "CODEBASE_PATTERN",
         "created_at": "2099-01-01T00:00:00Z"},
        {"content": BASE.replace("staging", "production"), "type": "CODEBASE_PATTERN"},
    ]  # fmt: skip
    assert repo.import_(items) == (2, 1)
    assert repo.get(old).status == "superseded"
    shown = found(repo, "beta checkout flag")
    assert BASE.replace("enabled", "disabled") in shown  # the newer value
    assert BASE.replace("staging", "production") in shown  # another environment: kept beside
