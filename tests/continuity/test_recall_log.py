"""The recall log: what hooks recalled reaches the learnings' access stamps without a hook ever
writing (or waiting for) memory.db (D397)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.continuity import _recall_log
from hrm.continuity._learnings_sql import format_ts
from hrm.continuity._recall_log import append_recall, take_recalls
from hrm.continuity.learnings import RECALL_LOG, LearningsRepository
from hrm.continuity.learnings_types import DecayStrategy, LearningInput, SearchQuery
from hrm.errors import HRMError
from hrm.home import HRMHome, initialize

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    home = HRMHome(tmp_path / "home")
    initialize(home)
    return home


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stored(home: HRMHome, clock: Clock) -> dict[str, str]:
    """Three learnings in the home's memory.db, by a process that stamps recalls at once."""
    with LearningsRepository.open(home, clock=clock, embeddings="off") as repo:
        return {
            word: repo.store_learning(
                LearningInput(content=content, type="WORKING_SOLUTION")  # type: ignore[arg-type]
            ).id
            for word, content in (
                ("nginx", "nginx reload picks up a changed vhost file"),
                ("redis", "redis evicts with allkeys-lru on the cache box"),
                ("postgres", "postgres vacuum runs nightly at three"),
            )
        }


@pytest.fixture
def hook_repo(home: HRMHome, clock: Clock) -> Iterator[LearningsRepository]:
    repo = LearningsRepository.open(home, clock=clock, embeddings="off", recalls="log")
    yield repo
    repo.close()


def _stamps(home: HRMHome) -> dict[str, tuple[int, str]]:
    with sqlite3.connect(home.memory_db) as conn:
        rows = conn.execute("SELECT id, access_count, accessed_at FROM learnings").fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def _recall(repo: LearningsRepository, text: str) -> list[str]:
    return [r.learning.id for r in repo.search_memories(SearchQuery(text=text)).results]


def test_a_hook_search_logs_its_recall_and_leaves_the_database_alone(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository, clock: Clock
) -> None:
    before = _stamps(home)
    clock.now = T0 + timedelta(hours=2)
    results = hook_repo.search_memories(SearchQuery(text="nginx vhost")).results
    assert [r.learning.id for r in results][:1] == [stored["nginx"]]
    assert results[0].learning.access_count == 1  # the answer says it was recalled
    assert _stamps(home) == before
    log = home.root / RECALL_LOG
    assert log.stat().st_mode & 0o777 == 0o600
    assert stored["nginx"] in log.read_text()


def test_the_next_write_applies_the_log_once(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository, clock: Clock
) -> None:
    first, second = T0 + timedelta(hours=1), T0 + timedelta(hours=3)
    clock.now = first
    _recall(hook_repo, "nginx vhost")
    clock.now = second
    _recall(hook_repo, "nginx vhost")
    _recall(hook_repo, "redis evicts")
    with LearningsRepository.open(home, clock=clock, embeddings="off") as writer:
        writer.store_learning(
            LearningInput(content="docker compose up rebuilds with --build", type="WORKING_SOLUTION")  # type: ignore[arg-type]
        )
        assert writer.fold_recalls() == 0  # taken: nothing is applied twice
    stamps = _stamps(home)
    assert stamps[stored["nginx"]] == (2, format_ts(second))
    assert stamps[stored["redis"]][0] == 1
    assert not (home.root / RECALL_LOG).exists()


def test_an_older_stamp_in_the_log_never_moves_a_newer_one_back(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository, clock: Clock
) -> None:
    clock.now = T0 + timedelta(days=2)
    with LearningsRepository.open(home, clock=clock, embeddings="off") as direct:
        _recall(direct, "nginx vhost")  # stamped in the database at once
    clock.now = T0 + timedelta(days=1)
    _recall(hook_repo, "nginx vhost")
    assert hook_repo.fold_recalls() == 1
    assert _stamps(home)[stored["nginx"]] == (2, format_ts(T0 + timedelta(days=2)))


def test_decay_weighs_the_logged_recalls(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository, clock: Clock
) -> None:
    for _ in range(3):
        _recall(hook_repo, "postgres vacuum")
    with LearningsRepository.open(home, clock=clock, embeddings="off") as writer:
        writer.apply_decay(DecayStrategy(age_weight=0.5, access_weight=0.5, min_score=0.0))
    assert _stamps(home)[stored["postgres"]][0] == 3


def test_a_log_past_its_size_is_applied_by_the_hook_that_finds_it_so(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_recall_log, "FOLD_BYTES", 1)
    _recall(hook_repo, "redis evicts")
    assert _stamps(home)[stored["redis"]][0] == 1
    assert not (home.root / RECALL_LOG).exists()


def test_a_hook_search_does_not_wait_for_another_writer(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository
) -> None:
    """Stamping in the database took BEGIN IMMEDIATE: behind a writer holding memory.db it
    waited the busy timeout and failed. Logging never asks for the write lock."""
    holder = sqlite3.connect(home.memory_db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert _recall(hook_repo, "postgres vacuum")[:1] == [stored["postgres"]]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_lines_that_do_not_parse_are_skipped_and_counted(tmp_path: Path) -> None:
    log = tmp_path / RECALL_LOG
    stamp = format_ts(T0)
    append_recall(log, stamp, ["lrn-a"])
    with open(log, "ab") as fh:
        fh.write(b'["2026-03-01T09:00:00.000000Z",["lrn-b"\n')  # torn
        fh.write(b'["yesterday",["lrn-c"]]\n')  # not a stamp
        fh.write(b'["2026-03-01T09:00:00.000000Z",[""]]\n')  # empty id
        fh.write(b"\xff\xfe\n")  # not UTF-8
    recalls = take_recalls(log)
    assert recalls.counts == {"lrn-a": 1}
    assert recalls.skipped_lines == 4


def test_taking_a_missing_log_takes_nothing(tmp_path: Path) -> None:
    recalls = take_recalls(tmp_path / RECALL_LOG)
    assert (recalls.counts, recalls.skipped_lines) == ({}, 0)


def test_a_bad_recalls_mode_is_refused(home: HRMHome) -> None:
    with pytest.raises(HRMError, match="recalls must be"):
        LearningsRepository.open(home, embeddings="off", recalls="later")


def test_appends_from_many_threads_lose_no_line(tmp_path: Path) -> None:
    log = tmp_path / RECALL_LOG
    stamp = format_ts(T0)

    def hook(n: int) -> None:
        for i in range(50):
            append_recall(log, stamp, [f"lrn-{n}-{i}", "lrn-shared"])

    threads = [threading.Thread(target=hook, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    recalls = take_recalls(log)
    assert recalls.skipped_lines == 0
    assert recalls.counts["lrn-shared"] == 400
    assert len(recalls.counts) == 401


_IDS = st.sampled_from(["lrn-a", "lrn-b", "lrn-c", "lrn-\u00e9t\u00e9", 'lrn-"q"'])
_STAMPS = st.integers(0, 10_000).map(lambda s: format_ts(T0 + timedelta(seconds=s)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_STAMPS, st.lists(_IDS, min_size=1, max_size=4)), max_size=20))
def test_a_taken_log_counts_every_recall_and_keeps_the_latest_stamp(
    tmp_path_factory: pytest.TempPathFactory, recalls: list[tuple[str, list[str]]]
) -> None:
    log = tmp_path_factory.mktemp("log") / RECALL_LOG
    for stamp, ids in recalls:
        append_recall(log, stamp, ids)
    taken = take_recalls(log)
    expected_counts: dict[str, int] = {}
    expected_latest: dict[str, str] = {}
    for stamp, ids in recalls:
        for i in ids:
            expected_counts[i] = expected_counts.get(i, 0) + 1
            expected_latest[i] = max(expected_latest.get(i, ""), stamp)
    assert taken.counts == expected_counts
    assert taken.latest == expected_latest
    assert sorted(taken.rows()) == sorted(
        (expected_latest[i], n, i) for i, n in expected_counts.items()
    )


def test_threads_taking_the_log_at_once_apply_each_line_once(tmp_path: Path) -> None:
    log = tmp_path / RECALL_LOG
    stamp = format_ts(T0)
    for i in range(200):
        append_recall(log, stamp, [f"lrn-{i % 7}"])
    taken: list[dict[str, int]] = []
    start = threading.Barrier(4)

    def take() -> None:
        start.wait()
        taken.append(take_recalls(log).counts)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(sum(counts.values()) for counts in taken) == 200


def test_a_fold_that_cannot_write_leaves_the_write_that_called_it_alone(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _recall(hook_repo, "nginx vhost")
    with LearningsRepository.open(home, embeddings="off") as writer:
        def refuse(*_args: object, **_kwargs: object) -> None:
            raise HRMError.validation_failed("the disk is full")

        monkeypatch.setattr(writer._db, "executemany", refuse)
        assert writer.fold_recalls() == 0
        monkeypatch.undo()
        writer.store_learning(
            LearningInput(content="caddy renews certificates by itself", type="WORKING_SOLUTION")  # type: ignore[arg-type]
        )


def test_opening_the_learnings_outside_a_hook_applies_the_log(
    home: HRMHome, stored: dict[str, str], hook_repo: LearningsRepository
) -> None:
    """`hrm memory show` after a few prompts counts the recalls the hooks made."""
    _recall(hook_repo, "postgres vacuum")
    _recall(hook_repo, "postgres vacuum")
    with LearningsRepository.open(home, embeddings="off") as reader:
        assert reader.get(stored["postgres"]).access_count == 2
    with LearningsRepository.open(home, embeddings="off", recalls="log") as hook:
        assert hook.get(stored["postgres"]).access_count == 2  # a hook's open applies nothing
