"""The ledger's fast encoder writes exactly the canonical JSON the standard encoder writes (D314).

Every hash in a ledger is over that text, and any tool must be able to recompute it with a plain
JSON library, so the faster path must never change a byte: not for strings with escapes or
non-ASCII characters, not for floats Python prints with an exponent, not for huge integers.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import HRMError
from hrm.scrubbing import scrub_text
from hrm.storage._ledger_format import _prepare_item, canonical_json
from hrm.storage.ledger import Ledger

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), values, max_size=6))
def test_the_fast_encoding_is_the_canonical_json(data: dict[str, Any]) -> None:
    try:
        _, prepared, text = _prepare_item("event", data)
    except HRMError:
        return  # a lone surrogate is refused either way (the ledger says where)
    assert text == canonical_json(prepared)
    assert json.loads(text) == prepared


@pytest.mark.parametrize(
    "value",
    [1e-05, 1.5e-300, 1e16, 1.2345e22, -2.5e-7, 0.0, -0.0, 0.0001, 9999999999999998.0, 2**64,
     -(2**63) - 1, 10**30, "\x00\x1f\x7f\u2028\u2029\ufeff", "tab\tquote\"back\\slash", "😀"],
)
def test_values_where_encoders_differ_are_written_canonically(value: Any) -> None:
    _, prepared, text = _prepare_item("event", {"v": value, "nested": [{"v": value}]})
    assert text == json.dumps(prepared, sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False)


def test_a_string_that_is_not_unicode_is_still_refused(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.jsonl", manifest=False) as ledger:
        with pytest.raises(HRMError, match="not valid Unicode"):
            ledger.append("event", {"text": "lone \ud800 surrogate"})
        assert ledger.last() is None


class _Mode(str, Enum):
    QUICK = "quick"


def test_a_str_enum_member_does_not_leak_through_the_scrubbers_memo() -> None:
    """Scrubbing a `str` enum member once must not make the memo answer the plain string with
    the member: a key that came back as one was refused by orjson, and every turn record took
    the standard encoder, seven times slower (D360)."""
    assert type(scrub_text(_Mode.QUICK)) is str
    assert type(scrub_text("quick")) is str
    _, prepared, text = _prepare_item("event", {"quick": _Mode.QUICK, _Mode.QUICK: [_Mode.QUICK]})
    assert all(type(key) is str for key in prepared)
    assert text == '{"quick":["quick"]}'


def test_a_record_of_plain_values_never_needs_the_standard_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scrub_text(_Mode.QUICK)  # as a turn's stance does before its record is written

    class _Refusing:
        def encode(self, value: object) -> str:
            raise AssertionError("the standard encoder was used")

    monkeypatch.setattr("hrm.storage._ledger_format._ENCODER", _Refusing())
    data = {"stance": _Mode.QUICK, "quick": 1, "score": 0.25, "ok": True, "none": None,
            "nested": {"quick": [0.5, "é😀", {"quick": False}]}}
    _, prepared, text = _prepare_item("event", data)
    assert json.loads(text) == prepared == json.loads(json.dumps(data))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_number_that_is_not_finite_is_refused_where_it_is(bad: float) -> None:
    with pytest.raises(HRMError, match=r"data\['a'\]\[0\]\['b'\] is"):
        _prepare_item("event", {"a": [{"b": bad}]})
    with pytest.raises(HRMError, match=r"data\['b'\] is"):
        _prepare_item("event", {"b": bad})


# Keys the scrubber leaves as they are: the property is about the values ("<PRIVATE>" as a key
# is scrubbed to "[private]", as any string of a record is).
_KEYS = st.text().filter(lambda key: scrub_text(key) == key)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, st.one_of(st.floats(), st.booleans(), st.integers()), max_size=8))
def test_scalars_kept_inline_are_prepared_as_the_walk_prepares_them(
    data: dict[str, Any],
) -> None:
    """The walk takes plain floats, bools and ints without a call; the rest as before."""
    if any(isinstance(v, float) and not math.isfinite(v) for v in data.values()):
        with pytest.raises(HRMError):
            _prepare_item("event", data)
        return
    _, prepared, text = _prepare_item("event", data)
    assert prepared == data
    assert text == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
