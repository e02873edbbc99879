"""The Episodic Trace (001 §6.3): a ledger with a rebuildable query index, per stack."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.memory.episodic import _EVENTS_ONLY, BOOKKEEPING_TYPES, INDEX_BATCH, EpisodicTraceStore
from hrm.memory.types import EpisodeEntry
from hrm.storage.ledger import Ledger
from hrm.storage.sqlite import Database


@pytest.fixture
def store(db: Database, home: HRMHome, clock: Any) -> Iterator[EpisodicTraceStore]:
    trace = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    yield trace
    trace.close()


def entry(entry_type: str = "observation", **fields: Any) -> EpisodeEntry:
    return EpisodeEntry(entry_type=entry_type, **fields)


def test_append_assigns_id_and_timestamp_and_get_returns_the_entry(
    store: EpisodicTraceStore, clock: Any
) -> None:
    entry_id = store.append(entry(content={"saw": "rain"}, tags=["weather"], problem_id="p"))
    assert entry_id.startswith("ep_") and len(entry_id) == 19
    got = store.get(entry_id)
    assert got == EpisodeEntry(
        id=entry_id,
        timestamp=clock(),
        problem_id="p",
        entry_type="observation",
        content={"saw": "rain"},
        tags=["weather"],
    )


def test_the_ledger_is_the_truth(store: EpisodicTraceStore, home: HRMHome) -> None:
    entry_id = store.append(entry(content={"n": 1}))
    store.commit()
    path = home.episodic_ledger("ADMIN")
    assert path == home.root / "HO2" / "ledger" / "ADMIN" / "episodic.jsonl"
    with Ledger(path) as ledger:
        records = list(ledger.records())
        assert ledger.verify().ok
    assert [(r.kind, r.data["id"]) for r in records] == [("episode", entry_id)]


def test_query_filters_by_problem_type_tags_and_time_newest_first(
    store: EpisodicTraceStore, clock: Any
) -> None:
    ids = []
    for i in range(6):
        ids.append(
            store.append(
                entry(
                    "decision" if i % 2 else "action",
                    problem_id="p1" if i < 3 else "p2",
                    tags=["a", "b"] if i % 3 == 0 else ["a"],
                    content={"i": i},
                )
            )
        )
        clock.advance(minutes=1)
    assert [e.id for e in store.query()] == ids[::-1]
    assert [e.content["i"] for e in store.query(problem_id="p1")] == [2, 1, 0]
    assert [e.content["i"] for e in store.query(entry_type="decision")] == [5, 3, 1]
    assert [e.content["i"] for e in store.query(tags=["b"])] == [3, 0]
    assert [e.content["i"] for e in store.query(tags=["a", "b"], problem_id="p2")] == [3]
    assert [e.content["i"] for e in store.query(tags=["a", "missing"])] == []
    start = clock() - timedelta(minutes=5)
    end = clock() - timedelta(minutes=3)
    assert [e.content["i"] for e in store.query(start=start, end=end)] == [3, 2, 1]
    assert [e.content["i"] for e in store.query(start=start, end=end, tags=["a"])] == [3, 2, 1]
    assert [e.content["i"] for e in store.query(limit=2)] == [5, 4]


def test_query_orders_by_the_entry_timestamp(store: EpisodicTraceStore, clock: Any) -> None:
    late = store.append(entry(timestamp=clock() + timedelta(hours=1)))
    early = store.append(entry(timestamp=clock() - timedelta(hours=1)))
    assert [e.id for e in store.query()] == [late, early]


def test_supersede_links_both_entries(store: EpisodicTraceStore) -> None:
    old = store.append(entry(content={"v": 1}))
    new = store.supersede(old, entry(content={"v": 2}))
    assert store.get(old).superseded_by == new
    assert store.get(new).supersedes == old
    assert store.get(new).superseded_by is None
    kinds = [r.kind for r in store.ledger.records()]
    assert kinds == ["episode", "episode", "superseded"]


def test_supersede_refuses_missing_or_already_superseded(store: EpisodicTraceStore) -> None:
    with pytest.raises(HRMError) as info:
        store.supersede("ep_missing", entry())
    assert info.value.code is ErrorCode.NOT_FOUND
    old = store.append(entry())
    store.supersede(old, entry())
    with pytest.raises(HRMError) as info:
        store.supersede(old, entry())
    assert info.value.code is ErrorCode.CONFLICT_DETECTED
    assert store.count() == 2


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        pytest.param(entry(""), "entry_type", id="no-type"),
        pytest.param(entry(content={"x": {1}}), "$.content.x", id="not-json"),
        pytest.param(entry(tags=["", "x"]), "tags", id="empty-tag"),
        pytest.param(entry(content=["list"]), "content must be a dict", id="content-list"),
    ],
)
def test_bad_entries_are_rejected_and_nothing_is_written(
    store: EpisodicTraceStore, bad: EpisodeEntry, message: str
) -> None:
    store.append(entry())
    with pytest.raises(HRMError) as info:
        store.append_many([entry(), bad])
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert message in info.value.message
    assert store.count() == 1
    assert len(list(store.ledger.records())) == 1


def test_a_superseding_entry_that_is_not_json_names_its_path(store: EpisodicTraceStore) -> None:
    old = store.append(entry())
    with pytest.raises(HRMError) as info:
        store.supersede(old, entry(content={"x": [1, {2}]}))
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "$.content.x[1]" in info.value.message
    assert store.count() == 1


def test_duplicate_ids_are_rejected(store: EpisodicTraceStore) -> None:
    store.append(entry(id="ep_fixed"))
    with pytest.raises(HRMError) as info:
        store.append(entry(id="ep_fixed"))
    assert "ep_fixed" in info.value.message
    assert store.count() == 1


def test_secrets_never_reach_the_ledger_or_index(
    store: EpisodicTraceStore, home: HRMHome, db: Database
) -> None:
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    entry_id = store.append(entry(content={"cmd": f"export AWS_KEY={secret}"}))
    store.commit()
    assert secret not in home.episodic_ledger("ADMIN").read_text()
    assert secret not in json.dumps([tuple(r) for r in db.execute("SELECT * FROM episodes")])
    assert "[REDACTED:aws_access_key]" in store.get(entry_id).content["cmd"]


def test_rebuild_index_recreates_everything_from_the_ledger(
    store: EpisodicTraceStore, db: Database
) -> None:
    old = store.append(entry(tags=["t"], problem_id="p"))
    new = store.supersede(old, entry(tags=["t"]))
    before = [e.to_dict() for e in store.query()]
    db.execute("DELETE FROM episodes")
    db.execute("DELETE FROM episode_tags")
    assert store.query() == []
    assert store.rebuild_index() == 2
    assert [e.to_dict() for e in store.query()] == before
    assert store.get(old).superseded_by == new
    assert [e.id for e in store.query(tags=["t"], problem_id="p")] == [old]


def test_a_new_store_catches_up_on_unindexed_ledger_records(
    db: Database, home: HRMHome, clock: Any
) -> None:
    first = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    kept = first.append(entry())
    first.close()
    # A process that crashed after its ledger append, before indexing it:
    with Ledger(home.episodic_ledger("ADMIN")) as ledger:
        ledger.append(
            "episode",
            {
                "id": "ep_orphan",
                "timestamp": "2026-11-22T10:00:00.000000Z",
                "problem_id": None,
                "entry_type": "observation",
                "content": {},
                "tags": [],
                "supersedes": None,
            },
        )
    second = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    assert {e.id for e in second.query()} == {kept, "ep_orphan"}
    second.close()


def test_a_replaced_ledger_triggers_a_rebuild(db: Database, home: HRMHome, clock: Any) -> None:
    first = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    for _ in range(3):
        first.append(entry())
    first.close()
    path = home.episodic_ledger("ADMIN")
    path.unlink()
    path.with_name(path.name + ".anchor").unlink(missing_ok=True)
    # And the manifest, which would refuse the new ledger: it knows three were committed.
    (home.root / "HOT" / "ledger" / "manifest.json").unlink(missing_ok=True)
    with Ledger(path) as ledger:
        ledger.append(
            "episode",
            {
                "id": "ep_new",
                "timestamp": "2026-11-22T10:00:00.000000Z",
                "entry_type": "observation",
                "content": {},
                "tags": [],
            },
        )
    second = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    assert [e.id for e in second.query()] == ["ep_new"]
    second.close()


def test_rebuild_on_a_corrupt_ledger_names_the_record_and_keeps_the_index(
    store: EpisodicTraceStore, home: HRMHome
) -> None:
    store.append(entry(content={"n": 1}))
    store.append(entry(content={"n": 2}))
    store.commit()
    path = home.episodic_ledger("ADMIN")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[1].replace(b'"n":2', b'"n":3'))
    with pytest.raises(HRMError) as info:
        store.rebuild_index()
    assert info.value.code is ErrorCode.LEDGER_CORRUPT
    assert info.value.context["line"] == 2
    assert store.count() == 2


def test_stacks_have_separate_ledgers_and_indexes(
    db: Database, home: HRMHome, clock: Any
) -> None:
    admin = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    resident = EpisodicTraceStore(db, home, "RESIDENT:DoPeJar", clock=clock)
    a = admin.append(entry())
    r = resident.append(entry())
    assert [e.id for e in admin.query()] == [a]
    assert [e.id for e in resident.query()] == [r]
    with pytest.raises(HRMError):
        admin.get(r)
    resident.rebuild_index()
    assert [e.id for e in admin.query()] == [a]
    assert home.episodic_ledger("RESIDENT:DoPeJar").exists()
    admin.close()
    resident.close()


def test_query_rejects_a_bad_limit(store: EpisodicTraceStore) -> None:
    with pytest.raises(HRMError):
        store.query(limit=0)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.fixed_dictionaries(
        {"tag": st.sampled_from(["x", "y", "z"]), "problem": st.sampled_from(["p1", "p2"])}
    ),
    specs=st.lists(
        st.tuples(
            st.sampled_from(["p1", "p2", None]),
            st.sampled_from(["decision", "action"]),
            st.sets(st.sampled_from(["x", "y", "z"]), max_size=3),
        ),
        max_size=12,
    ),
)
def test_query_matches_a_plain_filter_and_survives_rebuild(
    db: Database, home: HRMHome, clock: Any, specs: list[Any], data: dict[str, str]
) -> None:
    tag, problem = data["tag"], data["problem"]
    store = EpisodicTraceStore(db, home, "RESIDENT:prop", clock=clock)
    store.rebuild_index()
    existing = {e.id for e in store.query(limit=10_000)}
    for problem_id, kind, tags in specs:
        clock.advance(seconds=1)
        store.append(entry(kind, problem_id=problem_id, tags=sorted(tags)))
    everything = [e for e in store.query(limit=10_000) if e.id not in existing]
    expected = [e.id for e in everything if tag in e.tags and e.problem_id == problem]
    got = [e.id for e in store.query(tags=[tag], problem_id=problem, limit=10_000)]
    assert [i for i in got if i not in existing] == expected
    store.rebuild_index()
    again = [e.id for e in store.query(tags=[tag], problem_id=problem, limit=10_000)]
    assert again == got
    store.close()


# ── the index trails the ledger (D27) ─────────────────────────────────────


def _indexed(db: Database) -> int:
    row = db.one("SELECT COUNT(*) AS n FROM episodes")
    return 0 if row is None else int(row["n"])


def test_appends_are_indexed_in_batches_and_a_read_indexes_the_rest(
    store: EpisodicTraceStore, db: Database
) -> None:
    for i in range(INDEX_BATCH - 1):
        store.append(entry(content={"i": i}))
    assert _indexed(db) == 0  # waiting in memory, safe in the ledger
    store.append(entry())
    assert _indexed(db) == INDEX_BATCH  # a full batch is indexed without a read
    last = store.append(entry(content={"last": True}))
    assert _indexed(db) == INDEX_BATCH
    assert store.get(last).content == {"last": True}
    assert store.count() == INDEX_BATCH + 1


def test_another_connection_reads_what_this_one_has_not_indexed(
    home: HRMHome, clock: Any
) -> None:
    with Database(home.memory_db) as db_a, Database(home.memory_db) as db_b:
        a = EpisodicTraceStore(db_a, home, "ADMIN", clock=clock)
        b = EpisodicTraceStore(db_b, home, "ADMIN", clock=clock)
        first = a.append(entry(content={"n": 1}))
        assert [e.id for e in b.query()] == [first]
        clock.advance(seconds=1)
        second = a.append(entry(content={"n": 2}))
        assert b.get(second).content == {"n": 2}
        assert [e.id for e in a.query()] == [second, first]  # a's own batch: no duplicates
        assert a.count() == b.count() == 2
        a.close()
        b.close()


def test_a_read_leaving_out_types_leaves_their_pending_entries_for_the_batch(
    store: EpisodicTraceStore, db: Database
) -> None:
    seen = store.append(entry("observation", content={"n": 1}))
    store.query(limit=5)  # a plain read indexes what is pending
    for i in range(3):
        store.append(entry("learning_outcome", content={"i": i}))
    # Nothing pending can be returned: nothing is indexed for this read, and it is right.
    assert [e.id for e in store.query(limit=5, events_only=True)] == [seen]
    assert _indexed(db) == 1
    # Entries it could return are indexed first; so are the others, with them.
    later = store.append(entry("observation", content={"n": 2}))
    assert [e.id for e in store.query(limit=5, events_only=True)] == [
        later, seen
    ]
    assert _indexed(db) == 5
    assert len(store.query(limit=10)) == 5


def test_a_pending_entry_that_supersedes_is_indexed_even_for_a_read_leaving_its_type_out(
    store: EpisodicTraceStore,
) -> None:
    old = store.append(entry("observation", content={"v": 1}))
    store.query(limit=5)
    new = store.supersede(old, entry("learning_outcome", content={"v": 2}))
    (shown,) = store.query(limit=5, events_only=True)
    assert shown.id == old and shown.superseded_by == new


def test_a_read_sees_what_another_handle_appended_after_its_own_appends(
    store: EpisodicTraceStore, db: Database, home: HRMHome, clock: Any
) -> None:
    mine = store.append(entry(content={"who": "me"}))
    store.query(limit=5)
    other = EpisodicTraceStore(db, home, "ADMIN", clock=clock)  # another process's handle
    theirs = other.append(entry(content={"who": "them"}))
    other.ledger.close()  # its memory gone: only the ledger tells
    assert {e.id for e in store.query(limit=5)} == {mine, theirs}


def test_a_rolled_back_batch_is_indexed_again_by_the_next_read(
    store: EpisodicTraceStore, db: Database
) -> None:
    ids = {store.append(entry()) for _ in range(3)}
    with pytest.raises(RuntimeError), db.transaction():
        assert store.index_pending() == 3
        raise RuntimeError("the enclosing work failed")
    assert _indexed(db) == 0
    assert {e.id for e in store.query()} == ids


def test_entries_a_crashed_process_held_in_memory_are_indexed_from_the_ledger(
    home: HRMHome, clock: Any
) -> None:
    with Database(home.memory_db) as db:
        crashed = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
        held = crashed.append(entry(content={"held": True}))
        crashed.ledger.close()  # the process dies: its memory is gone, its ledger stays
    with Database(home.memory_db) as db:
        assert _indexed(db) == 0
        reopened = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
        assert _indexed(db) == 1  # opening catches up
        assert reopened.get(held).content == {"held": True}
        reopened.close()


def test_closing_after_the_database_logs_and_leaves_the_rest_to_the_next_open(
    home: HRMHome, clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    db = Database(home.memory_db)
    store = EpisodicTraceStore(db, home, "ADMIN", clock=clock)
    kept = store.append(entry())
    db.close()
    with caplog.at_level(logging.WARNING, logger="hrm.memory.episodic"):
        store.close()
    assert "the next open indexes the rest" in caplog.text
    with Database(home.memory_db) as again:
        reopened = EpisodicTraceStore(again, home, "ADMIN", clock=clock)
        assert [e.id for e in reopened.query()] == [kept]
        reopened.close()


def test_threads_appending_at_once_leave_a_complete_index_and_mark(
    store: EpisodicTraceStore, db: Database
) -> None:
    ids: list[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        for i in range(n):
            entry_id = store.append(entry(content={"i": i}))
            with lock:
                ids.append(entry_id)

    threads = [threading.Thread(target=work, args=(INDEX_BATCH + 7,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {e.id for e in store.query(limit=10_000)} == set(ids)
    last = store.ledger.last()
    assert last is not None
    row = db.one("SELECT last_seq FROM episode_index_state WHERE agent_class = 'ADMIN'")
    assert row is not None and row["last_seq"] == last.seq


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["append", "read", "flush", "rollback"]),
            st.integers(0, 1),
            st.integers(1, INDEX_BATCH + 5),
        ),
        max_size=20,
    )
)
def test_every_read_on_either_connection_sees_the_whole_ledger(
    home: HRMHome, clock: Any, ops: list[tuple[str, int, int]]
) -> None:
    """Two connections append, read, index and roll back in any order; a read always
    returns exactly what the ledger holds."""
    agent = f"RESIDENT:p{abs(hash(tuple(ops))) % 10**9}"
    with Database(home.memory_db) as db_a, Database(home.memory_db) as db_b:
        stores = [
            EpisodicTraceStore(db_a, home, agent, clock=clock),
            EpisodicTraceStore(db_b, home, agent, clock=clock),
        ]
        written: set[str] = set()
        for op, who, n in ops:
            store = stores[who]
            if op == "append":
                written.update(store.append_many([entry() for _ in range(n)]))
            elif op == "read":
                assert {e.id for e in store.query(limit=10_000)} == written
                assert store.count() == len(written)
            elif op == "flush":
                store.index_pending()
            else:
                with pytest.raises(RuntimeError), store.db.transaction():
                    store.index_pending()
                    raise RuntimeError("rolled back")
        for store in stores:
            assert {e.id for e in store.query(limit=10_000)} == written
            store.close()


def test_the_events_index_names_exactly_the_bookkeeping_types(
    store: EpisodicTraceStore, db: Database
) -> None:
    # The partial index, the literal in the query and the constant must agree, or SQLite
    # scans past every learning outcome for the newest events.
    row = db.one("SELECT sql FROM sqlite_master WHERE name = 'episodes_events'")
    assert row is not None
    named = set(re.findall(r"'([a-z_]+)'", row["sql"]))
    assert named == set(BOOKKEEPING_TYPES)
    plan = db.execute(
        "EXPLAIN QUERY PLAN SELECT e.data_json FROM episodes e WHERE e.agent_class = ?"
        + _EVENTS_ONLY + " ORDER BY e.ts DESC, e.seq DESC LIMIT 5", ("ADMIN",)
    )
    assert "episodes_events" in " ".join(str(r["detail"]) for r in plan)
