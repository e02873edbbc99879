"""The server's JSON bodies (orjson) read back as Starlette's would, for any JSON value."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st
from starlette.responses import JSONResponse as StarletteJSONResponse

from hrm.server.json_response import JSONResponse

_SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_VALUES)
def test_a_body_reads_back_as_starlettes_does(value: object) -> None:
    ours = JSONResponse(value).body
    theirs = StarletteJSONResponse(value).body
    assert json.loads(ours) == json.loads(theirs)
    assert ours.decode("utf-8")  # UTF-8, never ASCII escapes of it


def test_text_is_written_byte_for_byte_as_starlette_writes_it() -> None:
    value = {"b": "caf\u00e9 \u2028 \"q\" \n", "a": [1, 2.5, None, True]}
    assert JSONResponse(value).body == StarletteJSONResponse(value).body


def test_an_integer_past_64_bits_takes_starlettes_path() -> None:
    assert json.loads(JSONResponse({"n": 2**70}).body) == {"n": 2**70}


def test_a_float_json_cannot_hold_is_null_not_an_error() -> None:
    body = json.loads(JSONResponse({"score": math.nan, "cap": math.inf}).body)
    assert body == {"score": None, "cap": None}
