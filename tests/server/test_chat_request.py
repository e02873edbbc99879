"""Reading a chat request: any JSON is either a request or a 400 naming its fault."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrm.server.api_errors import APIError
from hrm.server.chat_request import (
    conversation_hash,
    parse_chat_request,
    parse_json_body,
    read_body,
)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_MESSAGE = st.fixed_dictionaries({
    "role": st.sampled_from(["system", "user", "assistant", "tool", "wizard"]) | _JSON,
    "content": st.text() | _JSON,
})
_REQUEST = st.fixed_dictionaries(
    {"model": st.just("hrm") | _JSON, "messages": st.lists(_MESSAGE, max_size=4) | _JSON},
    optional={"stream": st.booleans() | _JSON, "n": st.integers() | _JSON,
              "stream_options": st.fixed_dictionaries({"include_usage": st.booleans()}) | _JSON,
              "temperature": st.floats() | _JSON, "max_tokens": st.integers() | _JSON,
              "stop": _JSON, "logit_bias": _JSON, "tool_choice": _JSON,
              "response_format": st.fixed_dictionaries({"type": st.text(max_size=12)}) | _JSON},
)


@given(_REQUEST)
def test_any_json_is_a_request_or_a_400_with_the_openai_fields(data: dict) -> None:
    try:
        request = parse_chat_request(data)
    except APIError as error:
        assert error.status == 400
        assert set(error.body()["error"]) == {"message", "type", "param", "code"}
        assert error.param
    else:
        assert request.text.strip()
        assert data["messages"][-1]["role"] == "user"


_NEAR_SURROGATES = st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0xE00F, codec=None))


@given(st.dictionaries(_NEAR_SURROGATES, _NEAR_SURROGATES | st.lists(_NEAR_SURROGATES), max_size=3))
def test_a_body_is_text_any_turn_can_write_or_a_400_naming_the_surrogate(data: dict) -> None:
    """JSON may escape a lone surrogate; a body holding one is refused, never half-processed."""
    body = json.dumps({"model": "hrm", "x": data}).encode("ascii")  # lone ones as \udXXX
    try:
        parsed = parse_json_body(body)
    except APIError as error:
        assert (error.status, error.code) == (400, "invalid_encoding")
        assert error.param and error.param.startswith("x")
        error.message.encode("utf-8")  # the error itself can be sent
    else:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")


@given(st.binary(max_size=64))
def test_any_bytes_are_an_object_or_a_400(body: bytes) -> None:
    try:
        parsed = parse_json_body(body)
    except APIError as error:
        assert error.status == 400
    else:
        assert isinstance(parsed, dict)


def test_only_the_last_user_message_is_the_turns_input() -> None:
    request = parse_chat_request({"model": "hrm", "messages": [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "an answer"},
        {"role": "user", "content": [{"type": "text", "text": "second"},
                                     {"type": "text", "text": "part"}]},
    ]})
    assert request.text == "second\npart"
    assert request.messages == 4


def test_the_conversation_hash_changes_with_any_earlier_message() -> None:
    base = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}]
    edited = [base[0], {"role": "assistant", "content": "B"}, base[2]]
    assert conversation_hash(base) == conversation_hash([dict(m) for m in base])
    assert conversation_hash(base) != conversation_hash(edited)
    assert conversation_hash(base) != conversation_hash(base[2:])


def test_fields_hrm_does_not_use_are_accepted() -> None:
    request = parse_chat_request({"model": "hrm", "temperature": 0.2, "top_p": 1,
                                  "presence_penalty": 0, "user": "x",
                                  "messages": [{"role": "user", "content": "hi"}]})
    assert request.text == "hi"


def _chunks(*parts: bytes):
    async def gen():
        for part in parts:
            yield part
    return gen()


@pytest.mark.parametrize(("declared", "parts", "status"), [
    ("2000", [b"x" * 10], 413),
    (None, [b"x" * 600, b"x" * 600], 413),
    ("abc", [b"{}"], 400),
])
def test_a_body_over_the_limit_or_with_a_bad_length_is_refused(declared, parts, status) -> None:
    with pytest.raises(APIError) as caught:
        asyncio.run(read_body(_chunks(*parts), declared_length=declared, limit=1024))
    assert caught.value.status == status


def test_a_body_within_the_limit_is_read_whole() -> None:
    body = asyncio.run(read_body(_chunks(b'{"a":', b"1}"), declared_length="6", limit=1024))
    assert json.loads(body) == {"a": 1}
