"""Bounded search cost: term planning, cached counts, common-word queries, convex fusion."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity import _fts
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput, SearchFilters, SearchQuery
from hrm.errors import ErrorCode, HRMError
from hrm.storage.sqlite import Database

WORDS = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=4), unique=True, max_size=8)


@given(
    terms=WORDS,
    counts=st.lists(st.integers(min_value=0, max_value=5000), min_size=8, max_size=8),
    budget=st.integers(min_value=1, max_value=3000),
)
@settings(max_examples=150)
def test_a_plan_ranks_within_budget_and_loses_no_word(
    terms: list[str], counts: list[int], budget: int
) -> None:
    frequencies = dict(zip(terms, counts, strict=False))
    plan = _fts.plan_terms(terms, frequencies, budget=budget)
    assert sorted([*plan.ranked, *plan.dropped]) == sorted(terms)
    if plan.all_common:
        assert plan.dropped == ()
        assert all(frequencies[t] > budget for t in plan.ranked if frequencies[t] > 0)
        common = [t for t in plan.ranked if frequencies[t] > 0]
        assert common == sorted(common, key=lambda t: (frequencies[t], terms.index(t)))
    else:
        assert sum(frequencies[t] for t in plan.ranked) <= budget
        assert all(frequencies[t] > 0 for t in plan.dropped)  # absent words are never dropped
        assert plan.ranked == tuple(t for t in terms if t in plan.ranked)  # query order
        if plan.dropped:  # the rarest occurring word is ranked on
            rarest = min(frequencies[t] for t in terms if frequencies[t] > 0)
            assert any(frequencies[t] == rarest for t in plan.ranked)


def test_a_plan_keeps_at_least_one_word_and_goes_newest_first_when_all_are_common() -> None:
    plan = _fts.plan_terms(["service", "api", "billing"], {"service": 900, "api": 700,
                                                           "billing": 800}, budget=500)
    assert plan.all_common
    assert plan.ranked == ("api", "billing", "service")  # rarest first
    mixed = _fts.plan_terms(["service", "redis"], {"service": 900, "redis": 3}, budget=500)
    assert (mixed.ranked, mixed.dropped, mixed.all_common) == (("redis",), ("service",), False)


def test_query_words_split_like_the_index_tokenizer() -> None:
    assert _fts.query_terms("fix parse_config in barze_id") == ["fix", "parse", "config", "barze",
                                                                "id"]
    assert _fts.query_terms("__") == []


def test_term_counts_are_cached_until_the_store_grows() -> None:
    calls: list[str] = []

    def count(term: str) -> int:
        calls.append(term)
        return 7

    cache = _fts.TermFrequencies()
    assert cache.lookup(["a", "b"], row_count=1000, count=count) == {"a": 7, "b": 7}
    assert cache.lookup(["a"], row_count=1050, count=count) == {"a": 7}
    assert calls == ["a", "b"]
    cache.lookup(["a"], row_count=1200, count=count)  # grew by more than a tenth: recount
    assert calls == ["a", "b", "a"]


def test_absent_words_are_never_cached() -> None:
    calls: list[str] = []
    cache = _fts.TermFrequencies()
    for _ in range(2):
        cache.lookup(["new"], row_count=10, count=lambda t: calls.append(t) or 0)
    assert calls == ["new", "new"]


def test_the_term_count_cache_is_bounded() -> None:
    cache = _fts.TermFrequencies(capacity=3)
    for term in "abcdef":
        cache.lookup([term], row_count=10, count=lambda _t: 1)
    seen: list[str] = []
    cache.lookup(list("abcdef"), row_count=10, count=lambda t: seen.append(t) or 1)
    assert seen == ["a", "b", "c"]  # the oldest were evicted, the newest kept


@given(
    lexical=st.lists(st.tuples(st.integers(0, 20), st.floats(0, 1)), max_size=10),
    semantic=st.lists(st.tuples(st.integers(0, 20), st.floats(-1, 1)), max_size=10),
    weight=st.floats(0, 1),
)
@settings(max_examples=150)
def test_convex_fusion_scores_every_key_once_in_0_1_best_first(
    lexical: list[tuple[int, float]], semantic: list[tuple[int, float]], weight: float
) -> None:
    lexical = list(dict(lexical).items())
    semantic = list(dict(semantic).items())
    fused = _fts.convex_fuse(lexical, semantic, semantic_weight=weight)
    assert sorted(k for k, _ in fused) == sorted({k for k, _ in lexical} | {k for k, _ in semantic})
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(-1e-9 <= s <= 1 + 1e-9 for s in scores)


def test_convex_fusion_rewards_agreement_and_weighs_the_lists() -> None:
    lexical = [("both", 0.9), ("words", 1.0), ("low", 0.1)]
    semantic = [("both", 0.8), ("vector", 0.9), ("far", 0.2)]
    fused = dict(_fts.convex_fuse(lexical, semantic, semantic_weight=0.4))
    assert max(fused, key=fused.__getitem__) == "both"
    assert fused["words"] == pytest.approx(0.6)
    assert fused["vector"] == pytest.approx(0.4)
    assert fused["low"] == fused["far"] == 0.0


@given(
    scored=st.lists(st.tuples(st.integers(0, 15), st.floats(0, 1)), max_size=12),
    links=st.dictionaries(
        st.integers(0, 15), st.lists(st.integers(0, 30), max_size=4), max_size=12
    ),
    share=st.floats(0, 1),
)
@settings(max_examples=150)
def test_lending_adds_a_share_of_neighbouring_candidates_and_stays_in_0_1(
    scored: list[tuple[int, float]], links: dict[int, list[int]], share: float
) -> None:
    scored = sorted(dict(scored).items(), key=lambda item: -item[1])
    lent = _fts.lend_scores(scored, links, share=share)
    assert sorted(k for k, _ in lent) == sorted(k for k, _ in scored)  # nothing added
    scores = [s for _, s in lent]
    assert scores == sorted(scores, reverse=True)
    assert all(-1e-9 <= s <= 1 + 1e-9 for s in scores)
    base = dict(scored)
    raw = {k: base[k] + share * sum(base.get(n, 0.0) for n in links.get(k, ())) for k in base}
    top = max(raw.values(), default=0.0)
    for key, score in lent:  # a fixed scaling of s + share * Σ s(neighbour candidates)
        assert score == pytest.approx(raw[key] / top if top > 1 else raw[key])


def test_lending_without_neighbours_changes_nothing() -> None:
    scored = [("a", 0.9), ("b", 0.5), ("c", 0.5)]
    assert _fts.lend_scores(scored, {}) == scored
    assert _fts.lend_scores(scored, {"c": ["not-a-candidate"]}) == scored


def test_a_candidate_next_to_a_strong_one_rises() -> None:
    scored = [("stranger", 0.5), ("strong", 1.0), ("weak", 0.5)]
    lent = _fts.lend_scores(scored, {"weak": ["strong"], "strong": ["weak"]}, share=0.4)
    assert [k for k, _ in lent] == ["strong", "weak", "stranger"]
    assert dict(lent)["strong"] == pytest.approx(1.0)  # 1.2 scaled back to 1


# ── the repository with a tiny budget: the large-store paths on a small store ─────────────


@pytest.fixture
def small_budget() -> Iterator[LearningsRepository]:
    db = Database(":memory:")
    repo = LearningsRepository(db, ranked_row_budget=3)
    for i in range(6):
        repo.store_learning(
            LearningInput(content=f"service api note {i} about deployment {i * 7}",
                          type="WORKING_SOLUTION", session_id="s1" if i % 2 else "s2")
        )
    repo.store_learning(LearningInput(content="service redis eviction tuning", type="ERROR_FIX"))
    # A fresh repository: the stores above cached word counts from when the store was small
    # (stale counts cost time, never results, but these tests pin the large-store paths).
    yield LearningsRepository(db, ranked_row_budget=3)
    db.close()


def contents(repo: LearningsRepository, text: str, **kw: object) -> list[str]:
    found = repo.search_memories(SearchQuery(text=text, **kw))  # type: ignore[arg-type]
    return [r.learning.content for r in found.results]


def test_a_rare_word_still_finds_its_learning_beside_common_ones(
    small_budget: LearningsRepository,
) -> None:
    found = small_budget.search_memories(SearchQuery(text="service redis"))
    assert [r.learning.content for r in found.results] == ["service redis eviction tuning"]
    assert found.results[0].highlights == ["redis"]
    assert not found.total_exact  # "service" was left out of the count


def test_a_query_of_only_common_words_still_finds_the_rows_holding_them(
    small_budget: LearningsRepository,
) -> None:
    found = small_budget.search_memories(SearchQuery(text="service api", limit=10))
    texts = [r.learning.content for r in found.results]
    assert len(texts) == 7
    assert texts[-1] == "service redis eviction tuning"  # holds one of the two words
    assert all("api" in t for t in texts[:-1])
    assert texts[:-1] == sorted(texts[:-1], key=lambda t: -int(t.split()[3]))  # newest first
    assert found.total_count == 7 and not found.total_exact
    assert all(0.0 < r.relevance_score <= 1.0 for r in found.results)


def test_a_common_word_query_keeps_filters_and_limits(small_budget: LearningsRepository) -> None:
    texts = contents(small_budget, "service api", limit=2, filters=SearchFilters(session_id="s1"))
    assert texts == ["service api note 5 about deployment 35", "service api note 3 about deployment 21"]


def test_a_near_duplicate_is_found_through_its_rare_words(
    small_budget: LearningsRepository,
) -> None:
    first = small_budget.store_learning(
        LearningInput(content="service api rollback checklist for the zeppelin deploy pipeline"
                      " with canary gates and health probes", type="WORKING_SOLUTION")
    ).id
    with pytest.raises(HRMError) as caught:
        small_budget.store_learning(
            LearningInput(content="Service API rollback checklist for the zeppelin deploy"
                          " pipeline with canary gates and health probes!", type="ERROR_FIX")
        )
    assert caught.value.code is ErrorCode.DUPLICATE_DETECTED
    with pytest.raises(HRMError) as near:
        small_budget.store_learning(
            LearningInput(content="service api rollback checklist for the zeppelin deploy pipeline"
                          " with canary gates and health probes and retries", type="ERROR_FIX")
        )
    assert near.value.context["duplicate_id"] == first


def test_a_word_added_after_its_count_was_cached_is_found(
    small_budget: LearningsRepository,
) -> None:
    assert contents(small_budget, "zeppelin") == []
    small_budget.store_learning(LearningInput(content="zeppelin mooring", type="ERROR_FIX"))
    assert contents(small_budget, "zeppelin") == ["zeppelin mooring"]


def test_a_new_rare_word_beside_common_ones_is_found_after_an_empty_search(
    small_budget: LearningsRepository,
) -> None:
    before = contents(small_budget, "service api zeppelin", limit=3)
    assert "zeppelin" not in " ".join(before)
    small_budget.store_learning(LearningInput(content="zeppelin hangar checklist", type="ERROR_FIX"))
    assert contents(small_budget, "service api zeppelin", limit=3)[0] == "zeppelin hangar checklist"
