"""The memory data types: JSON encoding with scrubbing, timestamps, targets, round trips."""

from __future__ import annotations

import importlib
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrm.memory
from hrm.errors import ErrorCode, HRMError
from hrm.memory.types import (
    EpisodeEntry,
    SynthesizedPattern,
    encode_json,
    format_timestamp,
    parse_timestamp,
)
from hrm.scrubbing import scrub

SECRETS = [
    "sk-ant-" + "b" * 30,
    "ghp_" + "C" * 36,
    "Bearer\t" + "d" * 24,
    "password='hunter2hunter2'",
    "AKIA" + "Q" * 16,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----",
    "postgres://admin:s3cr3tpass@db.local/x",
]

texts = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda pre, secret, post: f"{pre}{secret}{post}",
        st.text(max_size=10),
        st.sampled_from(SECRETS),
        st.text(max_size=10),
    ),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_encode_json_scrubs_exactly_like_scrub(value: Any) -> None:
    """The one-pass secret check never lets through what scrubbing each string would catch."""
    assert json.loads(encode_json(value, what="v")) == scrub(value)


@pytest.mark.parametrize("secret", SECRETS)
def test_no_secret_survives_encoding(secret: str) -> None:
    encoded = encode_json({"note": f"x {secret} y", "list": [secret]}, what="v")
    assert "[REDACTED:" in encoded
    for part in ("b" * 30, "C" * 36, "d" * 24, "hunter2hunter2", "Q" * 16, "MIIEabc", "s3cr3t"):
        assert part not in encoded


def test_tuples_come_back_as_lists() -> None:
    assert json.loads(encode_json({"t": (1, 2)}, what="v")) == {"t": [1, 2]}


@pytest.mark.parametrize(
    ("value", "path"),
    [
        pytest.param({"a": [1, {"b": b"bytes"}]}, "$.a[1].b", id="bytes"),
        pytest.param({"a": float("inf")}, "$.a", id="inf"),
        pytest.param({("t",): 1}, "$", id="tuple-key"),
    ],
)
def test_encode_json_names_the_bad_path(value: Any, path: str) -> None:
    with pytest.raises(HRMError) as info:
        encode_json(value, what="shared reference 'k'")
    assert info.value.code is ErrorCode.VALIDATION_FAILED
    assert "shared reference 'k'" in info.value.message and path in info.value.message
    assert info.value.context["path"] == path


@settings(max_examples=150, deadline=None)
@given(
    moment=st.datetimes(
        min_value=datetime(1970, 1, 2),  # noqa: DTZ001 (hypothesis bounds are naive)
        max_value=datetime(9998, 12, 31),  # noqa: DTZ001
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
    )
)
def test_timestamps_round_trip_and_sort_as_text(moment: datetime) -> None:
    text = format_timestamp(moment)
    assert parse_timestamp(text) == moment
    assert len(text) == 27 and text.endswith("Z")
    later = moment + timedelta(microseconds=1)
    assert format_timestamp(later) > text


def test_naive_timestamps_are_refused_but_naive_text_is_utc() -> None:
    with pytest.raises(HRMError):
        format_timestamp(datetime(2026, 1, 1))  # noqa: DTZ001
    assert parse_timestamp("2026-01-01T10:00") == datetime(2026, 1, 1, 10, tzinfo=UTC)
    with pytest.raises(HRMError) as info:
        parse_timestamp("next tuesday")
    assert "next tuesday" in info.value.message


def test_pattern_from_dict_round_trips_and_rejects_unknown_fields() -> None:
    pattern = SynthesizedPattern(
        id="syn_1",
        pattern_type="t",
        description="d",
        evidence_ids=["ep_1"],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        last_strengthened_at=datetime(2026, 1, 2, tzinfo=UTC),
    )
    assert SynthesizedPattern.from_dict(pattern.to_dict()) == pattern
    with pytest.raises(HRMError) as info:
        SynthesizedPattern.from_dict({"pattern_type": "t", "colour": "red"})
    assert "colour" in info.value.message


def test_episode_to_dict_is_json() -> None:
    entry = EpisodeEntry(id="ep_1", timestamp=datetime(2026, 1, 1, tzinfo=UTC), tags=["a"])
    assert json.loads(json.dumps(entry.to_dict()))["timestamp"] == "2026-01-01T00:00:00.000000Z"


def test_package_exports_resolve() -> None:
    """Every exported name resolves (ruff's RUF022 keeps the list sorted)."""
    assert len(set(hrm.memory.__all__)) == len(hrm.memory.__all__)
    for name in hrm.memory.__all__:
        assert getattr(hrm.memory, name) is not None
    with pytest.raises(AttributeError):
        hrm.memory.__getattr__("Nope")


def test_importing_the_types_does_not_load_the_stores() -> None:
    module = importlib.import_module("hrm.memory.types")
    assert not hasattr(module, "Database")
