"""The ledger's fast encoder writes exactly the canonical JSON the standard encoder writes (D314).

Every hash in a ledger is over that text, and any tool must be able to recompute it with a plain
JSON library, so the faster path must never change a byte: not for strings with escapes or
non-ASCII characters, not for floats Python prints with an exponent, not for huge integers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrm.errors import HRMError
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


@settings(max_examples=400, deadline=None)
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
