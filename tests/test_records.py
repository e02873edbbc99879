"""`jsonable`: every decision record goes through it, so it must be exact for any shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hrm.turn.records import DecisionRecord, jsonable
from hrm.types import AltitudeLevel


class _Colour(str, Enum):
    RED = "red"


@dataclass
class _Inner:
    level: AltitudeLevel = AltitudeLevel.L2_OPERATIONS
    at: datetime = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    tags: frozenset[str] = frozenset({"a"})


@dataclass
class _Outer:
    name: str
    inner: _Inner = field(default_factory=_Inner)
    items: tuple[Any, ...] = ()


scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.floats(
    allow_nan=False
)
values = st.recursive(
    scalars | st.just(_Colour.RED) | st.builds(_Inner),
    lambda children: st.lists(children, max_size=4)
    | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=5) | st.integers() | st.just(_Colour.RED), children,
                      max_size=4),
    max_leaves=20,
)


@given(values)
def test_any_nesting_becomes_plain_json_data(value: Any) -> None:
    converted = jsonable(value)
    assert json.loads(json.dumps(converted)) == converted


def test_dataclasses_enums_datetimes_and_odd_keys_are_converted() -> None:
    out = jsonable(_Outer("x", items=(1, _Colour.RED, {2: _Inner()})))
    inner = {"level": AltitudeLevel.L2_OPERATIONS.value, "at": "2026-01-02T03:04:05+00:00", "tags": ["a"]}
    assert out == {"name": "x", "inner": inner, "items": [1, "red", {"2": inner}]}
    assert jsonable({_Colour.RED: 1}) == {str(_Colour.RED): 1}
    assert type(jsonable(True)) is bool and jsonable(None) is None


def test_fields_are_the_record_itself_and_to_dict_a_json_copy() -> None:
    record = DecisionRecord(turn=1, session_id="s", agent_class="ADMIN", trace_id="t",
                            input_summary="hi", escalation={"signals": {"at": datetime(2026, 1, 2, tzinfo=UTC)}})
    fields = record.fields(omit=frozenset({"arbitration"}))
    assert "arbitration" not in fields and fields["escalation"] is record.escalation
    copied = record.to_dict()
    assert copied["escalation"] == {"signals": {"at": "2026-01-02T00:00:00+00:00"}}
    assert copied["escalation"] is not record.escalation
