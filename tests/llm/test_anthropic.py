"""ClaudeAdapter over the real anthropic SDK with a stubbed HTTP transport (no network)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMCallConfig, LLMGateway, Message, RetryPolicy
from hrm.llm.anthropic import ClaudeAdapter

KEY = "sk-ant-api03-" + "k" * 40
MODEL = "claude-sonnet-4-6"


def message_body(text: str = "Hello!", stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class Server:
    """A scripted Messages API: each request pops the next response."""

    def __init__(self, *responses: httpx2.Response | Callable[[], httpx2.Response]) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        item = self.responses.pop(0)
        return item() if callable(item) else item

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def sent_key(request: httpx2.Request) -> str:
    """The key as the SDK sent it (``x-api-key`` or a bearer ``authorization``)."""
    if "x-api-key" in request.headers:
        return request.headers["x-api-key"]
    return request.headers.get("authorization", "").removeprefix("Bearer ")


def adapter_for(server: Server, **config: Any) -> ClaudeAdapter:
    settings = LLMConfig(provider="anthropic", api_key=KEY, model=MODEL, **config)
    client = httpx2.Client(transport=httpx2.MockTransport(server))
    return ClaudeAdapter(settings, http_client=client)


def sse(*events: tuple[str, dict[str, Any]]) -> httpx2.Response:
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def test_request_shape_and_response_mapping() -> None:
    server = Server(httpx2.Response(200, json=message_body(), headers={"request-id": "req_1"}))
    adapter = adapter_for(server, max_tokens=300)
    messages = [
        Message(role="user", content="Hi"),
        Message(role="assistant", content="Hello"),
        Message(role="system", content="Extra rule."),
        Message(role="user", content="Again"),
    ]
    response = adapter.chat(
        messages, "You are terse.", LLMCallConfig(stop_sequences=["END"], temperature=0.1)
    )
    [request] = server.requests
    assert request.url.path == "/v1/messages"
    assert sent_key(request) == KEY
    body = server.bodies[0]
    assert body["model"] == MODEL
    assert body["max_tokens"] == 300
    assert body["system"] == "You are terse.\n\nExtra rule."
    assert body["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Again"},
    ]
    assert body["stop_sequences"] == ["END"]
    assert "temperature" not in body  # the current Messages API takes none
    assert "stream" not in body or body["stream"] is False
    assert response.content == "Hello!"
    assert (response.provider, response.model) == ("anthropic", MODEL)
    assert (response.input_tokens, response.output_tokens, response.total_tokens) == (12, 3, 15)
    assert response.finish_reason == "stop"
    assert response.request_id == "msg_01"


def test_per_call_overrides_and_json_mode() -> None:
    server = Server(httpx2.Response(200, json=message_body('{"a": 1}')))
    adapter_for(server).chat(
        [Message(role="user", content="x")],
        "Rate.",
        LLMCallConfig(model="claude-haiku-4-5", max_tokens=20, json_mode=True),
    )
    body = server.bodies[0]
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 20
    assert body["system"].endswith("Return only JSON.")


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [("max_tokens", "length"), ("refusal", "content_filter"), ("stop_sequence", "stop")],
)
def test_stop_reasons_map_to_finish_reasons(stop_reason: str, finish: str) -> None:
    server = Server(httpx2.Response(200, json=message_body(stop_reason=stop_reason)))
    response = adapter_for(server).chat([Message(role="user", content="x")], "s")
    assert response.finish_reason == finish


def test_429_with_retry_after_is_a_rate_limit_the_gateway_honours() -> None:
    server = Server(
        httpx2.Response(
            429,
            json=error_body("rate_limit_error", "Number of requests exceeded"),
            headers={"retry-after": "7"},
        ),
        httpx2.Response(200, json=message_body("after")),
    )
    sleeps: list[float] = []
    gateway = LLMGateway(adapter_for(server), sleep=sleeps.append)
    response = gateway.chat([Message(role="user", content="x")], "s")
    assert response.content == "after"
    assert sleeps == [7.0]
    assert len(server.requests) == 2  # the SDK itself did not retry


def test_429_maps_to_rate_limit_with_delay() -> None:
    server = Server(
        httpx2.Response(
            429, json=error_body("rate_limit_error", "slow"), headers={"retry-after-ms": "1500"}
        )
    )
    with pytest.raises(HRMError) as caught:
        adapter_for(server).chat([Message(role="user", content="x")], "s")
    assert caught.value.code is ErrorCode.RATE_LIMIT
    assert caught.value.retry_after_ms == 1500


@pytest.mark.parametrize("status", [500, 529])
def test_server_errors_are_recoverable_provider_errors(status: int) -> None:
    server = Server(httpx2.Response(status, json=error_body("overloaded_error", "Overloaded")))
    with pytest.raises(HRMError) as caught:
        adapter_for(server).chat([Message(role="user", content="x")], "s")
    assert caught.value.code is ErrorCode.PROVIDER_ERROR
    assert caught.value.recoverable
    assert caught.value.context["status_code"] == status
    assert len(server.requests) == 1


def test_auth_error_is_permanent_and_never_shows_the_key() -> None:
    server = Server(httpx2.Response(401, json=error_body("authentication_error", "invalid x-api-key")))
    with pytest.raises(HRMError) as caught:
        adapter_for(server).chat([Message(role="user", content="x")], "s")
    assert not caught.value.recoverable
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.to_dict())
    assert KEY not in repr(adapter_for(Server()).__dict__.get("_model"))


def test_prompt_too_long_is_a_token_limit() -> None:
    server = Server(
        httpx2.Response(
            400, json=error_body("invalid_request_error", "prompt is too long: 210000 > 200000")
        )
    )
    with pytest.raises(HRMError) as caught:
        adapter_for(server).chat([Message(role="user", content="x")], "s")
    assert caught.value.code is ErrorCode.TOKEN_LIMIT


def test_transport_failure_and_timeout() -> None:
    def refuse() -> httpx2.Response:
        raise httpx2.ConnectError("refused")

    def slow() -> httpx2.Response:
        raise httpx2.ReadTimeout("slow")

    with pytest.raises(HRMError) as caught:
        adapter_for(Server(refuse)).chat([Message(role="user", content="x")], "s")
    assert (caught.value.code, caught.value.recoverable) == (ErrorCode.PROVIDER_ERROR, True)
    with pytest.raises(HRMError) as caught:
        adapter_for(Server(slow)).chat(
            [Message(role="user", content="x")], "s", LLMCallConfig(timeout_ms=250)
        )
    assert caught.value.code is ErrorCode.TIMEOUT
    assert caught.value.context["budget_ms"] == 250


def test_stream_maps_text_deltas_and_usage() -> None:
    start = message_body("")
    start["content"] = []
    start["stop_reason"] = None
    start["usage"] = {"input_tokens": 12, "output_tokens": 1}
    server = Server(
        sse(
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "Hel"}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "lo"}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {"type": "message_delta",
                 "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                 "usage": {"output_tokens": 2}},
            ),
            ("message_stop", {"type": "message_stop"}),
        )
    )
    chunks = list(adapter_for(server).stream([Message(role="user", content="x")], "s"))
    assert server.bodies[0]["stream"] is True
    assert [c.delta for c in chunks] == ["Hel", "lo", ""]
    final = chunks[-1]
    assert final.done and final.accumulated == "Hello"
    assert final.finish_reason == "stop"
    assert (final.input_tokens, final.output_tokens) == (12, 2)


def test_stream_error_before_first_chunk_is_retried_by_the_gateway() -> None:
    server = Server(
        httpx2.Response(503, json=error_body("api_error", "unavailable")),
        httpx2.Response(503, json=error_body("api_error", "unavailable")),
    )
    sleeps: list[float] = []
    gateway = LLMGateway(
        adapter_for(server), retry=RetryPolicy(max_retries=1, retry_delay_ms=10), sleep=sleeps.append
    )
    with pytest.raises(HRMError) as caught:
        list(gateway.stream([Message(role="user", content="x")], "s"))
    assert caught.value.code is ErrorCode.PROVIDER_ERROR
    assert len(server.requests) == 2
    assert len(sleeps) == 1


def test_missing_key_is_a_clear_validation_error() -> None:
    with pytest.raises(HRMError) as caught:
        ClaudeAdapter(LLMConfig(provider="anthropic"))
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert "ANTHROPIC_API_KEY" in caught.value.message


def test_key_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_CLAUDE_KEY", KEY)
    server = Server(httpx2.Response(200, json=message_body()))
    client = httpx2.Client(transport=httpx2.MockTransport(server))
    adapter = ClaudeAdapter(
        LLMConfig(provider="anthropic", api_key_env="MY_CLAUDE_KEY", model=MODEL),
        http_client=client,
    )
    adapter.chat([Message(role="user", content="x")], "s")
    assert sent_key(server.requests[0]) == KEY
    assert adapter.count_tokens("one two three") == 4


class _WatchedBody(httpx2.SyncByteStream):
    """An event stream whose closing is seen (the API stops generating for a closed client)."""

    def __init__(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.events = events
        self.closed = False

    def __iter__(self) -> Any:
        for name, data in self.events:
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    def close(self) -> None:
        self.closed = True


def test_a_stream_the_caller_stops_reading_closes_the_connection() -> None:
    start = message_body("")
    start["content"], start["stop_reason"] = [], None
    start["usage"] = {"input_tokens": 12, "output_tokens": 1}
    deltas = [
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": f"word {i} "}})
        for i in range(50)
    ]
    body = _WatchedBody([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        *deltas,
    ])
    server = Server(httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body))
    stream = adapter_for(server).stream([Message(role="user", content="x")], "s")
    assert next(stream).delta == "word 0 "
    stream.close()
    assert body.closed
