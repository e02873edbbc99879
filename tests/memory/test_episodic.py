"""The Episodic Trace (001 §6.3): a ledger with a rebuildable query index, per stack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.home import HRMHome
from hrm.memory.episodic import EpisodicTraceStore
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
