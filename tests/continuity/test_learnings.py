"""The learnings repository: store, duplicates, search, filters, expiry, decay, preferences."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import (
    ConfidenceLevel,
    DecayStrategy,
    LearningInput,
    LearningType,
    SearchFilters,
    SearchQuery,
)
from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.storage.sqlite import Database

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def repo(clock: FakeClock) -> Iterator[LearningsRepository]:
    db = Database(":memory:")
    yield LearningsRepository(db, clock=clock)
    db.close()


def learn(repo: LearningsRepository, content: str, type_: str = "WORKING_SOLUTION", **kw: object) -> str:
    return repo.store_learning(LearningInput(content=content, type=type_, **kw)).id  # type: ignore[arg-type]


def search(repo: LearningsRepository, text: str, **kw: object) -> list[str]:
    results = repo.search_memories(SearchQuery(text=text, **kw))  # type: ignore[arg-type]
    return [r.learning.id for r in results.results]


# ── store ──────────────────────────────────────────────────────────────────


def test_store_then_get_round_trips_every_field(repo: LearningsRepository, clock: FakeClock) -> None:
    expires = T0 + timedelta(days=3)
    stored = repo.store_learning(
        LearningInput(
            content="  Use uv for virtualenvs  ",
            type="codebase_pattern",
            tags=["Python", "tooling", "python"],
            confidence="high",
            context="repo setup",
            session_id="s-1",
            expires_at=expires,
            source="hook",
        )
    )
    got = repo.get(stored.id)
    assert stored.stored_at == T0
    assert got.content == "Use uv for virtualenvs"
    assert got.type is LearningType.CODEBASE_PATTERN
    assert got.tags == ["python", "tooling"]
    assert got.confidence is ConfidenceLevel.HIGH
    assert (got.context, got.session_id, got.expires_at) == ("repo setup", "s-1", expires)
    assert got.metadata == {"source": "hook", "relevance_score": 1.0}
    assert (got.status, got.access_count, got.created_at) == ("active", 0, T0)


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_blank_content_is_rejected(repo: LearningsRepository, content: str) -> None:
    with pytest.raises(HRMError) as info:
        learn(repo, content)
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_unknown_type_is_rejected_naming_valid_types(repo: LearningsRepository) -> None:
    with pytest.raises(HRMError) as info:
        learn(repo, "something", "HUNCH")
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "ERROR_FIX" in info.value.message


def test_naive_expiry_is_rejected(repo: LearningsRepository) -> None:
    with pytest.raises(HRMError) as info:
        learn(repo, "x y z", expires_at=datetime(2030, 1, 1))  # noqa: DTZ001 - the point
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_secrets_are_scrubbed_before_storage(repo: LearningsRepository) -> None:
    key = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0kLmN"
    learning_id = learn(repo, f"Auth works with {key} in the header", context=f"token {key}")
    got = repo.get(learning_id)
    assert key not in got.content and "REDACTED" in got.content
    assert got.context is not None and key not in got.context
    assert search(repo, "a1B2c3D4e5F6g7H8i9J0kLmN") == []


def test_get_unknown_id_is_not_found(repo: LearningsRepository) -> None:
    with pytest.raises(HRMError) as info:
        repo.get("lrn-missing")
    assert info.value.code is ErrorCode.NOT_FOUND


# ── duplicates ─────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "again",
    [
        pytest.param("Use async/await instead of .then() chains", id="exact"),
        pytest.param("use ASYNC await, instead of  .then chains!", id="case-punctuation"),
        pytest.param("Instead of .then() chains use async/await", id="reordered"),
    ],
)
def test_duplicates_return_the_existing_id(repo: LearningsRepository, again: str) -> None:
    first = learn(repo, "Use async/await instead of .then() chains")
    with pytest.raises(HRMError) as info:
        learn(repo, again, "ERROR_FIX")
    assert info.value.code is ErrorCode.DUPLICATE_DETECTED
    assert info.value.context["duplicate_id"] == first


@pytest.mark.parametrize(
    "other",
    [
        pytest.param("Do not use async/await instead of .then() chains", id="negation"),
        pytest.param("Use uv", id="short-different"),
        pytest.param("Use async/await instead of callbacks in handlers", id="different"),
    ],
)
def test_different_learnings_are_not_duplicates(repo: LearningsRepository, other: str) -> None:
    learn(repo, "Use async/await instead of .then() chains")
    learn(repo, "Use pip")
    assert learn(repo, other)


def test_a_pruned_learning_can_be_learned_again(repo: LearningsRepository, clock: FakeClock) -> None:
    learn(repo, "Old advice about the build cache")
    clock.advance(days=3650)
    repo.apply_decay(DecayStrategy(age_weight=0.5, access_weight=0.5, min_score=0.3))
    assert learn(repo, "Old advice about the build cache")


# ── search ─────────────────────────────────────────────────────────────────


@pytest.fixture
def corpus(repo: LearningsRepository) -> dict[str, str]:
    items = {
        "async": ("Use async/await instead of .then() for better readability", "WORKING_SOLUTION"),
        "pytest": ("pytest fixtures with tmp_path keep database tests isolated", "CODEBASE_PATTERN"),
        "retry": ("Retrying failed HTTP requests with exponential backoff fixed flaky sync", "ERROR_FIX"),
        "docker": ("Running migrations inside the docker entrypoint broke deploys", "FAILED_APPROACH"),
    }
    return {name: learn(repo, text, kind) for name, (text, kind) in items.items()}


def test_search_ranks_the_matching_learning_first(
    repo: LearningsRepository, corpus: dict[str, str]
) -> None:
    results = repo.search_memories(SearchQuery(text="how do I keep my database tests isolated?"))
    assert results.results[0].learning.id == corpus["pytest"]
    assert results.mode == "fts" and results.total_count >= 1
    scores = [r.relevance_score for r in results.results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_search_stems_words(repo: LearningsRepository, corpus: dict[str, str]) -> None:
    assert search(repo, "retry request")[0] == corpus["retry"]
    assert search(repo, "run migration")[0] == corpus["docker"]


def test_highlights_name_the_matched_words(repo: LearningsRepository, corpus: dict[str, str]) -> None:
    result = repo.search_memories(SearchQuery(text="async readability")).results[0]
    assert result.highlights == ["async", "readability"]


def test_search_updates_access_time_and_count(
    repo: LearningsRepository, corpus: dict[str, str], clock: FakeClock
) -> None:
    clock.advance(hours=5)
    repo.search_memories(SearchQuery(text="docker"))
    repo.search_memories(SearchQuery(text="docker entrypoint"))
    got = repo.get(corpus["docker"])
    assert (got.access_count, got.accessed_at) == (2, T0 + timedelta(hours=5))
    assert repo.get(corpus["async"]).access_count == 0


@pytest.mark.parametrize(
    "text",
    ['"unbalanced', "NEAR(docker", "docker*", "-docker", "docker AND OR NOT", "((docker", "d:o:c"],
)
def test_fts_syntax_in_user_text_is_plain_text(
    repo: LearningsRepository, corpus: dict[str, str], text: str
) -> None:
    ids = search(repo, text)
    if "docker" in text:
        assert corpus["docker"] in ids


def test_text_without_words_finds_nothing(repo: LearningsRepository, corpus: dict[str, str]) -> None:
    assert search(repo, "*** ( ) -") == []


def test_an_empty_store_answers_empty_and_still_validates(repo: LearningsRepository) -> None:
    found = repo.search_memories(SearchQuery(text="retry backoff"))
    assert (found.results, found.total_count, found.total_exact) == ([], 0, True)
    with pytest.raises(HRMError):  # validation still comes first
        repo.search_memories(SearchQuery(text="x", limit=0))
    first = learn(repo, "Retry with backoff when the upload fails")
    assert search(repo, "retry backoff") == [first]  # the first learning is found at once


def test_stopword_only_query_still_searches(repo: LearningsRepository) -> None:
    learning_id = learn(repo, "The who is a band")
    assert search(repo, "the who") == [learning_id]


@pytest.mark.parametrize("text", ["", "   "])
def test_blank_query_is_invalid(repo: LearningsRepository, text: str) -> None:
    with pytest.raises(HRMError) as info:
        repo.search_memories(SearchQuery(text=text))
    assert info.value.code is ErrorCode.QUERY_INVALID


@pytest.mark.parametrize("limit", [0, -1, 101])
def test_limit_outside_1_to_100_is_invalid(repo: LearningsRepository, limit: int) -> None:
    with pytest.raises(HRMError) as info:
        repo.search_memories(SearchQuery(text="x", limit=limit))
    assert info.value.code is ErrorCode.QUERY_INVALID


def test_limit_caps_results_but_not_total(repo: LearningsRepository) -> None:
    for i in range(15):
        learn(repo, f"cache invalidation note number {i} word{i}")
    results = repo.search_memories(SearchQuery(text="cache invalidation", limit=4))
    assert len(results.results) == 4
    assert results.total_count == 15


def test_filters_narrow_by_type_tag_confidence_session_and_date(
    repo: LearningsRepository, clock: FakeClock
) -> None:
    a = learn(repo, "parser fix for nested quotes", "ERROR_FIX", tags=["parser"], confidence="LOW")
    clock.advance(days=2)
    b = learn(repo, "parser pattern: recursive descent", "CODEBASE_PATTERN", session_id="s2")
    c = learn(repo, "parser choice: hand written", "ARCHITECTURAL_DECISION", confidence="HIGH")

    def only(**filters: object) -> set[str]:
        return set(search(repo, "parser", filters=SearchFilters(**filters)))  # type: ignore[arg-type]

    assert only(types=["error_fix", LearningType.CODEBASE_PATTERN]) == {a, b}
    assert only(tags=["PARSER", "other"]) == {a}
    assert only(confidence="MEDIUM") == {b, c}
    assert only(session_id="s2") == {b}
    assert only(date_range=(T0 + timedelta(days=1), None)) == {b, c}
    assert only(date_range=(None, T0)) == {a}


def test_unknown_filter_type_is_rejected(repo: LearningsRepository) -> None:
    with pytest.raises(HRMError) as info:
        search(repo, "x", filters=SearchFilters(types=["nope"]))
    assert info.value.code is ErrorCode.VALIDATION_FAILED


def test_expired_learnings_are_hidden_unless_asked(repo: LearningsRepository, clock: FakeClock) -> None:
    short = learn(repo, "feature flag beta-search is on", expires_at=T0 + timedelta(days=1))
    lasting = learn(repo, "feature flag names are kebab case")
    assert set(search(repo, "feature flag")) == {short, lasting}
    clock.advance(days=1)
    assert search(repo, "feature flag") == [lasting]
    assert set(search(repo, "feature flag", include_expired=True)) == {short, lasting}
    assert [x.id for x in repo.recent()] == [lasting]


def test_search_budget_does_not_cut_fts_only_search(repo: LearningsRepository) -> None:
    learn(repo, "budget test")
    results = repo.search_memories(SearchQuery(text="budget"), budget_ms=0)
    assert (len(results.results), results.timed_out) == (1, False)


def test_recent_is_newest_first_and_filters_types(repo: LearningsRepository, clock: FakeClock) -> None:
    first = learn(repo, "first thing", "ERROR_FIX")
    clock.advance(minutes=1)
    second = learn(repo, "second thing", "OPEN_THREAD")
    assert [x.id for x in repo.recent()] == [second, first]
    assert [x.id for x in repo.recent(types=["error_fix"])] == [first]
    assert [x.id for x in repo.recent(limit=1)] == [second]


# ── decay ──────────────────────────────────────────────────────────────────


def test_decay_prunes_old_unused_learnings_by_marking(repo: LearningsRepository, clock: FakeClock) -> None:
    old = learn(repo, "legacy webpack config trick")
    used = learn(repo, "legacy babel preset order")
    for _ in range(25):
        repo.search_memories(SearchQuery(text="babel preset"))
    clock.advance(days=365)
    fresh = learn(repo, "legacy vite alias setup")
    result = repo.apply_decay(DecayStrategy(age_weight=0.5, access_weight=0.5, min_score=0.3))
    assert (result.memories_decayed, result.memories_pruned) == (3, 1)
    assert result.average_age_days == pytest.approx(730 / 3)
    pruned = repo.get(old)
    assert (pruned.status, pruned.pruned_at) == ("pruned", clock.now)
    assert pruned.metadata["relevance_score"] < 0.3
    assert repo.get(used).status == repo.get(fresh).status == "active"
    assert repo.count() == 3  # nothing deleted
    assert set(search(repo, "legacy")) == {used, fresh}
    assert old in search(repo, "legacy", include_expired=True)


def test_decay_of_empty_store_is_zero(repo: LearningsRepository) -> None:
    result = repo.apply_decay(DecayStrategy(age_weight=0.5, access_weight=0.3, min_score=0.1))
    assert (result.memories_decayed, result.memories_pruned, result.average_age_days) == (0, 0, 0.0)


@pytest.mark.parametrize(
    "strategy",
    [
        DecayStrategy(age_weight=0.7, access_weight=0.4, min_score=0.1),
        DecayStrategy(age_weight=-0.1, access_weight=0.4, min_score=0.1),
        DecayStrategy(age_weight=0.1, access_weight=0.4, min_score=1.5),
    ],
)
def test_invalid_decay_strategy_is_rejected(repo: LearningsRepository, strategy: DecayStrategy) -> None:
    with pytest.raises(HRMError) as info:
        repo.apply_decay(strategy)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert info.value.context["reason"] == "INVALID_STRATEGY"


# ── preference truth model ─────────────────────────────────────────────────


@dataclass
class Verdict:
    preference_class: str


class ScriptedClassifier:
    def __init__(self, verdict: str) -> None:
        self.verdict = verdict
        self.calls: list[tuple[str, str]] = []

    def classify(self, statement: str, source: str = "user") -> Verdict:
        self.calls.append((statement, source))
        return Verdict(self.verdict)


def _repo_with(verdict: str, clock: FakeClock) -> tuple[LearningsRepository, ScriptedClassifier]:
    classifier = ScriptedClassifier(verdict)
    return LearningsRepository(Database(":memory:"), clock=clock, preference_classifier=classifier), classifier


def test_explicit_preference_is_active(clock: FakeClock) -> None:
    repo, classifier = _repo_with("EXPLICIT", clock)
    learning_id = learn(repo, "I prefer tabs", "USER_PREFERENCE", source="user")
    assert classifier.calls == [("I prefer tabs", "user")]
    got = repo.get(learning_id)
    assert (got.status, got.metadata["preference_class"]) == ("active", "EXPLICIT")


def test_inferred_preference_waits_for_confirmation(clock: FakeClock) -> None:
    repo, _ = _repo_with("INFERRED_CONFIRM_REQUIRED", clock)
    learning_id = learn(repo, "seems to like dark themes", "USER_PREFERENCE")
    assert repo.get(learning_id).status == "pending_confirmation"
    assert search(repo, "dark themes") == []
    assert search(repo, "dark themes", filters=SearchFilters(include_pending=True)) == [learning_id]
    assert repo.confirm(learning_id).status == "active"
    assert search(repo, "dark themes") == [learning_id]
    assert repo.confirm(learning_id).status == "active"  # idempotent


@pytest.mark.parametrize("verdict", ["INFERRED_SILENT", "BEHAVIORAL"])
def test_silent_and_behavioral_preferences_are_low_and_tagged(clock: FakeClock, verdict: str) -> None:
    repo, _ = _repo_with(verdict, clock)
    got = repo.get(learn(repo, "often runs tests twice", "USER_PREFERENCE", confidence="HIGH"))
    assert (got.status, got.confidence) == ("active", ConfidenceLevel.LOW)
    assert "inferred" in got.tags


def test_the_default_classifier_is_the_governance_one(repo: LearningsRepository) -> None:
    explicit = repo.get(learn(repo, "I prefer tabs over spaces", "USER_PREFERENCE"))
    relayed = repo.get(learn(repo, "I prefer pnpm over npm", "USER_PREFERENCE", source="agent"))
    assert explicit.status == "active"
    assert relayed.status == "pending_confirmation"


def test_confirm_unknown_or_pruned(repo: LearningsRepository, clock: FakeClock) -> None:
    with pytest.raises(HRMError) as info:
        repo.confirm("lrn-nope")
    assert info.value.code is ErrorCode.NOT_FOUND
    learning_id = learn(repo, "I prefer tabs over spaces", "USER_PREFERENCE")
    clock.advance(days=5000)
    repo.apply_decay(DecayStrategy(age_weight=0.6, access_weight=0.4, min_score=0.5))
    with pytest.raises(HRMError) as info:
        repo.confirm(learning_id)
    assert info.value.code is ErrorCode.VALIDATION_FAILED


# ── export / import ────────────────────────────────────────────────────────


def test_export_import_round_trip_keeps_ids_and_state(repo: LearningsRepository, clock: FakeClock) -> None:
    a = learn(repo, "export me first", tags=["x"], session_id="s")
    learn(repo, "export me second", "ERROR_FIX", confidence="LOW")
    repo.search_memories(SearchQuery(text="first"))
    exported = repo.export()
    target = LearningsRepository(Database(":memory:"), clock=clock)
    assert target.import_(exported) == (2, 0)
    assert target.export() == exported
    assert target.get(a).access_count == 1
    assert target.import_(exported) == (0, 2)
    assert search(target, "export first") [0] == a


def test_import_minimal_items_and_skip_in_file_duplicates(repo: LearningsRepository) -> None:
    items = [
        {"content": "minimal item", "type": "error_fix"},
        {"content": "Minimal item!", "type": "ERROR_FIX"},
    ]
    assert repo.import_(items) == (1, 1)
    assert repo.recent()[0].metadata["source"] == "import"


def test_a_bad_import_item_changes_nothing(repo: LearningsRepository) -> None:
    items = [{"content": "good one", "type": "ERROR_FIX"}, {"content": "bad", "type": "??"}]
    with pytest.raises(HRMError) as info:
        repo.import_(items)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert info.value.context["index"] == 1
    assert repo.count() == 0


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"access_count": "many"}, "access_count"),
        ({"access_count": [3]}, "access_count"),
        ({"access_count": 10**29}, "access_count"),
        ({"content": 5}, "content"),
        ({"access_count": -1}, "access_count"),
        ({"access_count": 2.5}, "access_count"),
        ({"metadata": ["not", "an", "object"]}, "metadata"),
        ({"metadata": {"relevance_score": "high"}}, "metadata.relevance_score"),
        ({"metadata": {"relevance_score": float("nan")}}, "metadata.relevance_score"),
    ],
)
def test_a_malformed_import_field_is_named_and_writes_nothing(
    repo: LearningsRepository, bad: dict[str, object], field: str
) -> None:
    items = [{"content": "good one", "type": "ERROR_FIX"},
             {"content": "second", "type": "ERROR_FIX", **bad}]
    with pytest.raises(HRMError) as info:
        repo.import_(items)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert info.value.context["index"] == 1 and info.value.context["field"] == field
    assert repo.count() == 0


def test_import_reads_numbers_written_as_text_and_null_as_absent(
    repo: LearningsRepository,
) -> None:
    items = [{"content": "counted", "type": "ERROR_FIX", "access_count": "3",
              "metadata": {"relevance_score": None}}]
    assert repo.import_(items) == (1, 0)
    exported = repo.export()
    assert exported[0]["access_count"] == 3
    assert exported[0]["metadata"]["relevance_score"] == 1.0


# ── artifacts ──────────────────────────────────────────────────────────────


def test_artifacts_are_indexed_upserted_and_searched(repo: LearningsRepository) -> None:
    first = repo.index_artifact("handoffs/s1/a.yaml", "handoff", "Resume: finish the OAuth flow")
    again = repo.index_artifact("handoffs/s1/a.yaml", "handoff", "Resume: finish the SAML login")
    assert first == again
    assert repo.search_artifacts("OAuth") == []
    hits = repo.search_artifacts("saml login")
    assert [(h["id"], h["kind"]) for h in hits] == [(first, "handoff")]
    assert "SAML" in hits[0]["snippet"]


def test_unknown_artifact_kind_is_rejected(repo: LearningsRepository) -> None:
    with pytest.raises(HRMError) as info:
        repo.index_artifact("x.md", "notes", "text")
    assert info.value.code is ErrorCode.VALIDATION_FAILED


# ── opening a home ─────────────────────────────────────────────────────────


def test_open_home_without_embeddings_is_fts_and_persistent(home: HRMHome) -> None:
    with LearningsRepository.open(home, embeddings="off") as repo:
        learning_id = learn(repo, "persisted across opens")
        assert not repo.supports_vectors
    with LearningsRepository.open(home, embeddings="off") as repo:
        assert repo.get(learning_id).content == "persisted across opens"
        assert repo.search_memories(SearchQuery(text="persisted")).mode == "fts"


def test_open_rejects_unknown_embeddings_setting(home: HRMHome) -> None:
    with pytest.raises(HRMError) as info:
        LearningsRepository.open(home, embeddings="maybe")
    assert info.value.code is ErrorCode.VALIDATION_FAILED


@pytest.mark.parametrize("field", ["created_at", "expires_at", "accessed_at"])
def test_dates_before_the_year_1000_are_stored_and_read_back(
    repo: LearningsRepository, field: str
) -> None:
    """glibc's strftime writes year 999 as "999": such a row could be stored but never read."""
    repo.import_([{"content": "an old date", "type": "ERROR_FIX", field: "0999-01-01T00:00:00Z"}])
    [exported] = repo.export()
    assert exported[field].startswith("0999-01-01T00:00:00")
    found = repo.search_memories(SearchQuery(text="old date", include_expired=True)).results
    assert [r.learning.content for r in found] == ["an old date"]
