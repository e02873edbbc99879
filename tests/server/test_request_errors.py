"""Bad requests get a clear 4xx in OpenAI's error shape, and nothing is written for them."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass

import pytest
from tests.server.conftest import Served
from tests.server.support import ledger_sizes


@dataclass(frozen=True)
class Case:
    body: bytes
    status: int
    code: str
    mentions: str
    param: str | None = None


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


_HI = [{"role": "user", "content": "hi"}]

CASES = [
    pytest.param(Case(b'{"model": "hrm", "messages": [', 400, "invalid_json", "not valid JSON"), id="malformed-json"),
    pytest.param(Case(b"\xff\xfe{}", 400, "invalid_encoding", "UTF-8"), id="invalid-utf8"),
    pytest.param(Case(b'{"model": "hrm", "messages": [{"role": "user", "content": "caf\xe9"}]}', 400, "invalid_encoding", "UTF-8"), id="latin1-inside-json"),
    pytest.param(Case(_json([1, 2]), 400, "invalid_json", "JSON object"), id="array-body"),
    pytest.param(Case(_json({"model": "hrm"}), 400, "invalid_value", "messages", "messages"), id="missing-messages"),
    pytest.param(Case(_json({"model": "hrm", "messages": []}), 400, "invalid_value", "non-empty", "messages"), id="empty-messages"),
    pytest.param(Case(_json({"model": "hrm", "messages": "hi"}), 400, "invalid_value", "array", "messages"), id="messages-a-string"),
    pytest.param(Case(_json({"messages": _HI}), 400, "invalid_value", "model", "model"), id="missing-model"),
    pytest.param(Case(_json({"model": 5, "messages": _HI}), 400, "invalid_value", "model", "model"), id="model-a-number"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "stream": "yes"}), 400, "invalid_value", "boolean", "stream"), id="stream-a-string"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "n": 2}), 400, "invalid_value", "must be 1", "n"), id="n-two"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "n": True}), 400, "invalid_value", "integer", "n"), id="n-a-boolean"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "stream_options": {"include_usage": True}}), 400, "invalid_value", "only when stream", "stream_options"), id="stream-options-without-stream"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "wizard", "content": "x"}]}), 400, "invalid_value", "role", "messages[0].role"), id="unknown-role"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user", "content": 42}]}), 400, "invalid_value", "string", "messages[0].content"), id="content-a-number"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user", "content": "   "}]}), 400, "invalid_value", "empty", "messages[0].content"), id="blank-message"),
    pytest.param(Case(_json({"model": "hrm", "messages": [*_HI, {"role": "assistant", "content": "x"}]}), 400, "invalid_value", "from the user", "messages[1].role"), id="last-not-user"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}), 400, "invalid_value", "text", "messages[0].content[0]"), id="image-part"),
    pytest.param(Case(_json({"model": "hrm", "messages": [None]}), 400, "invalid_value", "object", "messages[0]"), id="message-null"),
    pytest.param(Case(_json({"model": "gpt-4o", "messages": _HI}), 404, "model_not_found", "'hrm'", "model"), id="unknown-model"),
    # A message without content is named, not a 500 (KeyError).
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user"}]}), 400, "invalid_value", "(it is missing)", "messages[0].content"), id="content-missing"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user", "content": None}]}), 400, "invalid_value", "(got null)", "messages[0].content"), id="content-null"),
    pytest.param(Case(_json({"model": "hrm", "stream": True, "messages": [{"role": "user"}]}), 400, "invalid_value", "(it is missing)", "messages[0].content"), id="content-missing-streamed"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "system"}, *_HI]}), 400, "invalid_value", "system message needs content", "messages[0].content"), id="system-content-missing"),
    # Valid JSON, but no text can hold a lone surrogate: 400 naming where, not a 500.
    pytest.param(Case(b'{"model": "hrm", "messages": [{"role": "user", "content": "lone \\ud800 surrogate"}]}', 400, "invalid_encoding", "surrogate (\\ud800) in messages[0].content", "messages[0].content"), id="lone-surrogate"),
    pytest.param(Case(b'{"model": "hrm", "stream": true, "messages": [{"role": "user", "content": [{"type": "text", "text": "\\udfff"}]}]}', 400, "invalid_encoding", "surrogate", "messages[0].content[0].text"), id="lone-surrogate-in-a-part"),
    pytest.param(Case(b'{"model": "hrm", "messages": [{"role": "user", "content": "hi"}], "x\\ud800": 1}', 400, "invalid_encoding", "the name of x\\ud800", "x\\ud800"), id="lone-surrogate-in-a-key"),
    # "(got …)" names the JSON type actually sent.
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "tools": [{"type": "function", "function": {"name": "f"}}]}), 400, "unsupported_parameter", "(got an array)", "tools"), id="tools-array"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user", "content": []}]}), 400, "invalid_value", "is empty: it is the turn's input (got an empty array)", "messages[0].content"), id="content-empty-array"),
    pytest.param(Case(_json({"model": "hrm", "messages": []}), 400, "invalid_value", "(got an empty array)", "messages"), id="messages-empty-array"),
    pytest.param(Case(_json({"model": "hrm", "messages": [{"role": "user", "content": ""}]}), 400, "invalid_value", "(got an empty string)", "messages[0].content"), id="content-empty-string"),
    # The standard parameters are checked as OpenAI checks them.
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "max_tokens": "x"}), 400, "invalid_value", "'max_tokens' must be an integer of at least 1 (got a string)", "max_tokens"), id="max-tokens-a-string"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "max_tokens": 0}), 400, "invalid_value", "(got 0)", "max_tokens"), id="max-tokens-zero"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "max_completion_tokens": 1.5}), 400, "invalid_value", "integer", "max_completion_tokens"), id="max-completion-tokens-a-fraction"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "temperature": 5}), 400, "invalid_value", "'temperature' must be a number from 0 to 2 (got 5)", "temperature"), id="temperature-five"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "temperature": True}), 400, "invalid_value", "(got a boolean)", "temperature"), id="temperature-a-boolean"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "top_p": 1.5}), 400, "invalid_value", "from 0 to 1", "top_p"), id="top-p-over-one"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "presence_penalty": -3}), 400, "invalid_value", "from -2 to 2", "presence_penalty"), id="presence-penalty-under"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "frequency_penalty": "high"}), 400, "invalid_value", "(got a string)", "frequency_penalty"), id="frequency-penalty-a-string"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "stop": ["a", "b", "c", "d", "e"]}), 400, "invalid_value", "up to 4 strings (got 5 strings)", "stop"), id="stop-five"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "stop": [1]}), 400, "invalid_value", "(got a number)", "stop[0]"), id="stop-a-number"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "seed": "7"}), 400, "invalid_value", "integer", "seed"), id="seed-a-string"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "logit_bias": {"50256": 200}}), 400, "invalid_value", "-100 to 100", "logit_bias.50256"), id="logit-bias-out-of-range"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "user": 5}), 400, "invalid_value", "string", "user"), id="user-a-number"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "response_format": {"type": "json_object"}}), 400, "unsupported_value", "cannot promise JSON", "response_format"), id="json-object-refused"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}), 400, "unsupported_value", "not supported", "response_format"), id="json-schema-refused"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "response_format": {"type": "yaml"}}), 400, "invalid_value", "text, json_object, json_schema", "response_format.type"), id="response-format-unknown"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "logprobs": True}), 400, "unsupported_value", "not supported", "logprobs"), id="logprobs-refused"),
    pytest.param(Case(_json({"model": "hrm", "messages": _HI, "tool_choice": "required"}), 400, "unsupported_value", "decides which tools run", "tool_choice"), id="tool-choice-required"),
]


@pytest.mark.parametrize("case", CASES)
def test_bad_request_is_a_clear_4xx_and_writes_nothing(served: Served, case: Case) -> None:
    before = ledger_sizes(served.home)
    with served.server.client(served.alice) as http:
        response = http.post(
            "/v1/chat/completions", content=case.body,
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == case.status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == case.code
    assert case.mentions in error["message"]
    assert error["param"] == case.param
    assert ledger_sizes(served.home) == before


def test_a_ten_megabyte_body_is_413_before_it_is_read(served: Served) -> None:
    before = ledger_sizes(served.home)
    body = _json({"model": "hrm", "messages": [{"role": "user", "content": "x" * (10 << 20)}]})
    with served.server.client(served.alice) as http:
        response = http.post(
            "/v1/chat/completions", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    assert ledger_sizes(served.home) == before


def test_a_chunked_body_past_the_limit_is_413_too(served: Served) -> None:
    def pieces():  # no Content-Length: the server counts what arrives
        yield b'{"model": "hrm", "messages": [{"role": "user", "content": "'
        for _ in range(12):
            yield b"y" * (1 << 20)
        yield b'"}]}'

    before = ledger_sizes(served.home)
    with served.server.client(served.alice) as http:
        response = http.post("/v1/chat/completions", content=pieces())
    assert response.status_code == 413
    assert ledger_sizes(served.home) == before


def test_an_oversized_declared_length_is_refused_without_sending_the_body(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.server.port)) as raw:
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b"Authorization: Bearer " + served.alice.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10485760\r\n\r\n"
        )
        head = raw.recv(4096).decode()
    assert head.startswith("HTTP/1.1 413")


def test_unknown_routes_and_methods_answer_in_openais_shape(served: Served) -> None:
    with served.server.client(served.alice) as http:
        missing = http.get("/v1/nothing/here")
        wrong = http.get("/v1/chat/completions")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "unknown_url"
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"


def test_a_path_cannot_forge_an_access_log_line(served: Served) -> None:
    start = len(served.server.lines)
    with served.server.client(served.alice) as http:
        assert http.get("/v1/x%0Aforged%20200").status_code == 404
    line = served.server.wait_for(r"GET /v1/x", start=start).string
    assert "%0A" in line
    assert not any(entry.startswith("forged") for entry in served.server.lines[start:])
