"""The Working Set (001 §6.3): per-problem scratch memory with a TTL on an injected clock."""

from __future__ import annotations

from typing import Any

import pytest

from hrm.errors import ErrorCode, HRMError
from hrm.memory.working_set import WorkingSetStore
from hrm.storage.sqlite import Database


@pytest.fixture
def store(db: Database, clock: Any) -> WorkingSetStore:
    return WorkingSetStore(db, "ADMIN", clock=clock)


def test_create_gives_an_empty_set_expiring_after_its_ttl(
    store: WorkingSetStore, clock: Any
) -> None:
    working = store.create("p1", ttl_hours=3)
    assert working.constraints == {} and working.open_questions == []
    assert (working.expires_at - working.created_at).total_seconds() == 3 * 3600
    got = store.get("p1")
    assert got is not None and got.expires_at == working.expires_at


def test_default_ttl_is_two_hours(store: WorkingSetStore) -> None:
    working = store.create("p1")
    assert (working.expires_at - working.created_at).total_seconds() == 2 * 3600


def test_an_expired_set_reads_as_absent_and_expire_stale_removes_it(
    store: WorkingSetStore, clock: Any
) -> None:
    store.create("old", ttl_hours=1)
    store.create("young", ttl_hours=5)
    clock.advance(hours=1)
    assert store.get("old") is None
    assert [w.problem_id for w in store.stale()] == ["old"]
    assert store.expire_stale() == 1
    assert store.expire_stale() == 0
    assert store.get("young") is not None
    assert [w.problem_id for w in store.list_active()] == ["young"]


def test_create_replaces_an_expired_set_but_not_a_live_one(
    store: WorkingSetStore, clock: Any
) -> None:
    store.create("p", ttl_hours=1)
    store.set("p", "draft", "v1")
    with pytest.raises(HRMError) as info:
        store.create("p")
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    clock.advance(hours=2)
    fresh = store.create("p")
    assert fresh.partial_artifacts == {}


def test_update_merges_dicts_and_extends_lists(store: WorkingSetStore) -> None:
    store.create("p")
    store.update("p", constraints={"budget": 10}, open_questions=["why?"])
    store.update(
        "p",
        constraints={"deadline": "friday"},
        open_questions=["how?"],
        assumptions=[{"text": "users are admins"}],
        local_decisions=[{"choice": "sqlite"}],
    )
    working = store.get("p")
    assert working is not None
    assert working.constraints == {"budget": 10, "deadline": "friday"}
    assert working.open_questions == ["why?", "how?"]
    assert working.assumptions == [{"text": "users are admins"}]
    assert working.local_decisions == [{"choice": "sqlite"}]


def test_update_with_replace_overwrites(store: WorkingSetStore) -> None:
    store.create("p")
    store.update("p", open_questions=["a", "b"])
    store.update("p", replace=True, open_questions=["c"])
    working = store.get("p")
    assert working is not None and working.open_questions == ["c"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"colour": "red"}, "Unknown working set field 'colour'", id="unknown"),
        pytest.param({"constraints": ["x"]}, "takes a dict", id="wrong-type"),
        pytest.param({"partial_artifacts": {"x": {1, 2}}}, "$.x", id="not-json"),
    ],
)
def test_bad_updates_are_rejected_and_nothing_changes(
    store: WorkingSetStore, fields: dict[str, Any], message: str
) -> None:
    store.create("p")
    store.update("p", constraints={"kept": True})
    with pytest.raises(HRMError) as info:
        store.update("p", **fields)
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert message in info.value.message
    working = store.get("p")
    assert working is not None and working.constraints == {"kept": True}


def test_update_of_a_missing_set_is_not_found(store: WorkingSetStore) -> None:
    with pytest.raises(HRMError) as info:
        store.update("ghost", open_questions=["?"])
    assert info.value.code is ErrorCode.NOT_FOUND


def test_set_creates_the_set_and_stores_into_partial_artifacts(store: WorkingSetStore) -> None:
    store.set("p", "outline", ["intro", "body"])
    store.set("p", "title", "Draft")
    working = store.get("p")
    assert working is not None
    assert working.partial_artifacts == {"outline": ["intro", "body"], "title": "Draft"}


def test_export_summary_is_readable_and_works_for_expired_sets(
    store: WorkingSetStore, clock: Any
) -> None:
    store.create("launch", ttl_hours=1)
    store.update(
        "launch",
        constraints={"budget": "10k"},
        open_questions=["Which region?"],
        local_decisions=[
            {"db": "sqlite"},
            {"decision": "go with Decimal", "said": "Let's go with Decimal.", "turn": 4},
        ],
    )
    clock.advance(hours=2)
    summary = store.export_summary("launch")
    assert summary.startswith("# Working set: launch")
    assert "- budget: 10k" in summary
    assert "- Which region?" in summary
    assert '- {"db": "sqlite"}' in summary  # a shape of its own: as its JSON
    assert "- go with Decimal (turn 4: “Let's go with Decimal.”)" in summary
    assert "## Assumptions\n(none)" in summary
    with pytest.raises(HRMError):
        store.export_summary("ghost")


def test_secrets_are_scrubbed(store: WorkingSetStore, db: Database) -> None:
    token = "ghp_" + "A" * 36
    store.set("p", "env", f"GITHUB_TOKEN={token}")
    raw = db.execute("SELECT data_json FROM working_sets")[0]["data_json"]
    assert token not in raw


def test_stacks_are_isolated(db: Database, clock: Any) -> None:
    admin = WorkingSetStore(db, "ADMIN", clock=clock)
    resident = WorkingSetStore(db, "RESIDENT:DoPeJar", clock=clock)
    admin.set("p", "k", "admin")
    assert resident.get("p") is None
    resident.set("p", "k", "resident")
    clock.advance(hours=3)
    assert admin.expire_stale() == 1
    assert len(resident.stale()) == 1


@pytest.mark.parametrize("ttl", [0, -1])
def test_non_positive_ttl_is_rejected(store: WorkingSetStore, ttl: float) -> None:
    with pytest.raises(HRMError):
        store.create("p", ttl_hours=ttl)
