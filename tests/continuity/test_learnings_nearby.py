"""The learnings index holds each learning's session neighbours' text (D340), exactly.

Triggers keep the ``nearby`` column of ``learnings_fts`` equal to what the `learnings_nearby`
view computes from the table, whatever is stored, deleted, edited or moved; a search ranks a
learning higher when its neighbours hold the query's other words, but never returns one that
matches only through them; old homes are migrated with their index filled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.continuity._learnings_nearby import NEARBY_REACH
from hrm.continuity._learnings_sql import COMPONENT, INSERT_LEARNING, MIGRATIONS
from hrm.continuity.learnings import LearningsRepository
from hrm.continuity.learnings_types import LearningInput, SearchFilters, SearchQuery
from hrm.storage.sqlite import Database


@pytest.fixture
def repo(ticking_clock: Callable[[], datetime]) -> Iterator[LearningsRepository]:
    db = Database(":memory:")
    yield LearningsRepository(db, clock=ticking_clock)
    db.close()


def learn(repo: LearningsRepository, content: str, session: str | None) -> str:
    item = LearningInput(content=content, type="CODEBASE_PATTERN", session_id=session)
    return str(repo.store_learning(item))


def contents(repo: LearningsRepository, text: str, session: str | None = None) -> list[str]:
    filters = SearchFilters(session_id=session) if session else None
    found = repo.search_memories(SearchQuery(text=text, limit=10, filters=filters))
    return [r.learning.content for r in found.results]


def nearby_of(db: Database) -> dict[int, tuple[str, str]]:
    """For every learning: the indexed ``nearby`` text and the view's, side by side."""
    indexed = {int(r[0]): str(r[1]) for r in db.execute("SELECT rowid, nearby FROM learnings_fts")}
    computed = {int(r[0]): str(r[1]) for r in db.execute("SELECT seq, nearby FROM learnings_nearby")}
    return {seq: (indexed.get(seq, "<missing>"), text) for seq, text in computed.items()}


def test_a_learning_is_indexed_with_the_text_of_its_session_neighbours(
    repo: LearningsRepository,
) -> None:
    learn(repo, "zebra alpha first", "s1")
    learn(repo, "other session words", "s2")
    learn(repo, "yak beta second", "s1")
    learn(repo, "xenon gamma third", "s1")
    rows = {
        str(r["content"]): str(r["nearby"])
        for r in repo._db.execute("SELECT content, nearby FROM learnings_fts")
    }
    assert "zebra alpha first" in rows["yak beta second"]
    assert "xenon gamma third" in rows["yak beta second"]
    assert "other session" not in rows["yak beta second"]
    assert rows["other session words"].strip() == ""  # alone in its session


def test_reach_is_bounded_on_each_side(repo: LearningsRepository) -> None:
    words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape"]
    for word in words:
        learn(repo, f"{word} note for the orchard", "s1")
    row = repo._db.one(
        "SELECT nearby FROM learnings_fts WHERE content = ?", (f"{words[3]} note for the orchard",)
    )
    assert row is not None
    held = [w for w in words if w in str(row["nearby"])]
    assert held == words[3 - NEARBY_REACH : 3] + words[4 : 4 + NEARBY_REACH]


def test_a_neighbours_words_lift_a_learning_above_an_equal_one(repo: LearningsRepository) -> None:
    # Two learnings hold "retry backoff" alike; only one follows a learning about the gateway.
    learn(repo, "retry backoff doubled after each failure", "lonely")
    learn(repo, "the payments gateway timed out under load", "episode")
    learn(repo, "retry backoff doubled after timeouts", "episode")
    found = contents(repo, "payments gateway retry backoff")
    assert found.index("retry backoff doubled after timeouts") < found.index(
        "retry backoff doubled after each failure"
    )


def test_a_learning_found_only_through_its_neighbours_is_not_returned(
    repo: LearningsRepository,
) -> None:
    learn(repo, "quokka habitat notes", "s1")
    learn(repo, "the unrelated middle learning", "s1")
    assert contents(repo, "quokka") == ["quokka habitat notes"]
    assert contents(repo, "quokka", session="s1") == ["quokka habitat notes"]


def test_deleting_a_learning_removes_its_text_from_its_neighbours_index_rows(
    repo: LearningsRepository,
) -> None:
    learn(repo, "before the secret", "s1")
    learn(repo, "wombatpassphrase was here", "s1")
    learn(repo, "after the secret", "s1")
    with repo._db.transaction():
        repo._db.execute("DELETE FROM learnings WHERE content = 'wombatpassphrase was here'")
    hits = repo._db.execute(
        "SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH '\"wombatpassphrase\"'"
    )
    assert hits == []
    assert all(indexed == computed for indexed, computed in nearby_of(repo._db).values())


_ops = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "edit", "move"]),
        st.sampled_from(["s1", "s2", None]),
        st.integers(min_value=0, max_value=20),
        st.integers(min_value=0, max_value=30),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_ops)
def test_the_index_matches_the_view_after_any_writes(
    ops: list[tuple[str, str | None, int, int]],
) -> None:
    db = Database(":memory:")
    try:
        LearningsRepository(db)
        for number, (op, session, pick, minute) in enumerate(ops):
            stamp = f"2026-01-01T00:{minute:02d}:00.000000Z"
            seqs = [int(r[0]) for r in db.execute("SELECT seq FROM learnings ORDER BY seq")]
            target = seqs[pick % len(seqs)] if seqs else None
            with db.transaction():
                if op == "insert" or target is None:
                    db.execute(
                        INSERT_LEARNING,
                        (f"l-{number}", session, stamp, stamp, 0, f"word{number} text", "CODEBASE_PATTERN",
                         "[]", "HIGH", None, None, "user", 1.0, "active", None, None, f"k{number}"),
                    )
                elif op == "delete":
                    db.execute("DELETE FROM learnings WHERE seq = ?", (target,))
                elif op == "edit":
                    db.execute(
                        "UPDATE learnings SET content = ? WHERE seq = ?", (f"edited{number}", target)
                    )
                else:
                    db.execute(
                        "UPDATE learnings SET session_id = ?, created_at = ? WHERE seq = ?",
                        (session, stamp, target),
                    )
        pairs = nearby_of(db)
        assert all(indexed == computed for indexed, computed in pairs.values()), pairs
        fts_rows = db.one("SELECT count(*) AS n FROM learnings_fts")
        assert fts_rows is not None and int(fts_rows["n"]) == len(pairs)
    finally:
        db.close()


def test_an_old_home_is_migrated_with_its_neighbours_indexed() -> None:
    db = Database(":memory:")
    try:
        db.migrate(COMPONENT, MIGRATIONS[:1])  # a home made before migration 2
        with db.transaction():
            for number, text in enumerate(["kestrel nest spotted", "falcon diving fast"]):
                stamp = f"2026-01-01T00:00:0{number}.000000Z"
                db.execute(
                    INSERT_LEARNING,
                    (f"old-{number}", "s1", stamp, stamp, 0, text, "CODEBASE_PATTERN", "[]", "HIGH", None,
                     None, "user", 1.0, "active", None, None, f"key{number}"),
                )
        repo = LearningsRepository(db)
        assert contents(repo, "kestrel") == ["kestrel nest spotted"]
        assert all(indexed == computed for indexed, computed in nearby_of(db).values())
        row = db.one("SELECT nearby FROM learnings_fts WHERE content = 'falcon diving fast'")
        assert row is not None and "kestrel" in str(row["nearby"])
    finally:
        db.close()
