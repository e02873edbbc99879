"""The Shared Reference (001 §6.3): versioned, citable, restorable facts of one stack."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrm.errors import ErrorCode, HRMError
from hrm.memory.shared_reference import SharedReferenceStore
from hrm.storage.sqlite import Database


@pytest.fixture
def store(db: Database, clock: Any) -> SharedReferenceStore:
    return SharedReferenceStore(db, "ADMIN", clock=clock)


def test_set_returns_consecutive_versions_and_get_returns_the_latest(
    store: SharedReferenceStore,
) -> None:
    assert store.set("tone", "formal", "user") == 1
    assert store.set("tone", {"style": "casual", "emoji": False}, "agent") == 2
    latest = store.get("tone")
    assert (latest.version, latest.value, latest.source) == (
        2,
        {"style": "casual", "emoji": False},
        "agent",
    )
    assert store.get("tone", version=1).value == "formal"
    assert store.list_versions("tone") == [1, 2]


def test_latest_holds_every_key_at_its_newest_version_and_follows_writes(
    store: SharedReferenceStore, db: Database, clock: Any
) -> None:
    assert store.latest() == ()
    store.set("tone", "formal", "user")
    store.set("units", "metric", "user")
    store.set("tone", "casual", "user")
    assert store.latest() == (("tone", "casual"), ("units", "metric"))
    store.rollback("tone", 1)
    assert dict(store.latest())["tone"] == "formal"
    # Another connection's write is seen on the next read.
    other = Database(db.path)
    try:
        SharedReferenceStore(other, "ADMIN", clock=clock).set("units", "imperial", "user")
    finally:
        other.close()
    assert dict(store.latest())["units"] == "imperial"


def test_created_at_is_the_first_version_and_updated_at_this_one(
    store: SharedReferenceStore, clock: Any
) -> None:
    first = clock()
    store.set("k", 1, "user")
    clock.advance(hours=1)
    store.set("k", 2, "user")
    ref = store.get("k")
    assert (ref.created_at, ref.updated_at) == (first, clock())


def test_cite_names_key_version_source_and_time(store: SharedReferenceStore) -> None:
    store.set("deadline", "2026-12-01", "user")
    store.set("deadline", "2026-12-05", "pm")
    store.set("deadline", "2026-12-07", "pm")
    assert store.cite("deadline") == "[ref:deadline@v3 by pm, 2026-11-22T10:00:00Z]"


def test_rollback_restores_the_exact_value_as_a_new_version(
    store: SharedReferenceStore,
) -> None:
    store.set("plan", {"steps": [1, 2.5, "three"], "done": None}, "user")
    store.set("plan", "scrapped", "user")
    assert store.rollback("plan", 1) is True
    restored = store.get("plan")
    assert restored.version == 3
    assert restored.value == {"steps": [1, 2.5, "three"], "done": None}
    assert restored.rollback_of == 1
    assert store.get("plan", 2).value == "scrapped"


def test_rollback_to_a_missing_version_names_the_versions_and_changes_nothing(
    store: SharedReferenceStore,
) -> None:
    store.set("k", "a", "user")
    store.set("k", "b", "user")
    with pytest.raises(HRMError) as info:
        store.rollback("k", 7)
    assert info.value.code is ErrorCode.NOT_FOUND
    assert "k@v7" in info.value.message and "1, 2" in info.value.message
    assert store.list_versions("k") == [1, 2]
    assert store.get("k").value == "b"


def test_missing_key_and_version_raise_not_found(store: SharedReferenceStore) -> None:
    with pytest.raises(HRMError) as info:
        store.get("nope")
    assert info.value.code is ErrorCode.NOT_FOUND
    store.set("k", 1, "user")
    with pytest.raises(HRMError):
        store.get("k", version=2)
    with pytest.raises(HRMError):
        store.cite("nope")
    assert store.list_versions("nope") == []


@pytest.mark.parametrize(
    ("value", "where"),
    [
        pytest.param({1: "int key"}, "$", id="int-key"),
        pytest.param({"a": {1, 2}}, "$.a", id="set"),
        pytest.param([1, object()], "$[1]", id="object"),
        pytest.param({"x": float("nan")}, "$.x", id="nan"),
    ],
)
def test_a_value_that_is_not_json_is_rejected_and_nothing_changes(
    store: SharedReferenceStore, value: Any, where: str
) -> None:
    store.set("k", "kept", "user")
    with pytest.raises(HRMError) as info:
        store.set("k", value, "user")
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "'k'" in info.value.message and where in info.value.message
    assert store.list_versions("k") == [1]
    assert store.get("k").value == "kept"


def test_empty_key_or_source_is_rejected(store: SharedReferenceStore) -> None:
    with pytest.raises(HRMError):
        store.set("", 1, "user")
    with pytest.raises(HRMError):
        store.set("k", 1, " ")


def test_secrets_are_scrubbed_before_storage(store: SharedReferenceStore, db: Database) -> None:
    secret = "sk-ant-" + "a" * 40
    store.set("creds", {"note": f"key is {secret}"}, "user")
    raw = db.execute("SELECT value_json FROM shared_references")[0]["value_json"]
    assert secret not in raw
    assert "[REDACTED:anthropic_key]" in store.get("creds").value["note"]


def test_stacks_never_see_each_others_references(db: Database, clock: Any) -> None:
    admin = SharedReferenceStore(db, "ADMIN", clock=clock)
    resident = SharedReferenceStore(db, "RESIDENT:DoPeJar", clock=clock)
    admin.set("k", "admin", "user")
    resident.set("k", "resident", "user")
    resident.set("only-resident", 1, "user")
    assert admin.get("k").value == "admin"
    assert resident.get("k").value == "resident"
    assert admin.keys() == ["k"]
    assert admin.list_versions("k") == [1]


def test_invalid_agent_class_is_rejected(db: Database) -> None:
    with pytest.raises(HRMError):
        SharedReferenceStore(db, "RESIDENT:../x")


def test_history_lists_every_version_oldest_first(store: SharedReferenceStore) -> None:
    for value in ("a", "b", "c"):
        store.set("k", value, "user")
    store.rollback("k", 1)
    assert [(r.version, r.value, r.rollback_of) for r in store.history("k")] == [
        (1, "a", None),
        (2, "b", None),
        (3, "c", None),
        (4, "a", 1),
    ]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(
    max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(json_values, min_size=1, max_size=5), data=st.data())
def test_rollback_then_get_returns_the_exact_earlier_value(
    store: SharedReferenceStore, values: list[Any], data: st.DataObject
) -> None:
    key = f"prop-{uuid.uuid4().hex}"
    for value in values:
        store.set(key, value, "user")
    target = data.draw(st.integers(1, len(values)))
    before = store.get(key, target).value
    store.rollback(key, target)
    after = store.get(key)
    assert after.value == before
    assert repr(after.value) == repr(before)
    assert after.version == len(values) + 1
    assert before == values[target - 1]
