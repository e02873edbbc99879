"""OpenAIAdapter over the real openai SDK with a stubbed HTTP transport (no network)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMCallConfig, LLMGateway, Message
from hrm.llm.openai import NO_KEY_PLACEHOLDER, OpenAIAdapter

KEY = "sk-proj-" + "z" * 40


def completion(
    text: str | None = "Hi there", finish: str = "stop", usage: bool = True
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
            }
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}
    return body


def error_body(message: str, code: str | None = None, kind: str = "invalid_request_error") -> Any:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class Server:
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


def adapter_for(server: Server, **config: Any) -> OpenAIAdapter:
    config.setdefault("api_key", KEY)
    settings = LLMConfig(provider="openai", **config)
    return OpenAIAdapter(settings, http_client=httpx2.Client(transport=httpx2.MockTransport(server)))


def ask(adapter: OpenAIAdapter, call: LLMCallConfig | None = None) -> Any:
    return adapter.chat([Message(role="user", content="Hello?")], "Be brief.", call)


def test_request_shape_and_response_mapping() -> None:
    server = Server(httpx2.Response(200, json=completion()))
    response = ask(
        adapter_for(server, model="gpt-4o", temperature=0.3, max_tokens=64),
        LLMCallConfig(stop_sequences=["\n\n"]),
    )
    [request] = server.requests
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = server.bodies[0]
    assert body["model"] == "gpt-4o"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello?"},
    ]
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert body["temperature"] == 0.3
    assert body["stop"] == ["\n\n"]
    assert "stream" not in body
    assert response.content == "Hi there"
    assert (response.provider, response.model) == ("openai", "gpt-4o-2024-08-06")
    assert (response.input_tokens, response.output_tokens, response.total_tokens) == (20, 4, 24)
    assert response.finish_reason == "stop"
    assert response.request_id == "chatcmpl-1"


def test_compatible_server_via_base_url_needs_no_key() -> None:
    server = Server(httpx2.Response(200, json=completion(usage=False)))
    adapter = adapter_for(
        server, api_key=None, base_url="http://localhost:11434/v1", model="llama3.2"
    )
    response = ask(adapter, LLMCallConfig(temperature=0.0, max_tokens=10, json_mode=True))
    [request] = server.requests
    assert str(request.url) == "http://localhost:11434/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {NO_KEY_PLACEHOLDER}"
    body = server.bodies[0]
    assert body["max_tokens"] == 10
    assert body["temperature"] == 0.0
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["content"].endswith("Return only JSON.")
    assert response.input_tokens > 0 and response.output_tokens > 0  # estimated: no usage


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("length", "length"), ("content_filter", "content_filter"), ("tool_calls", "stop")],
)
def test_finish_reasons(finish: str, expected: str) -> None:
    server = Server(httpx2.Response(200, json=completion(text=None, finish=finish)))
    response = ask(adapter_for(server))
    assert response.finish_reason == expected
    assert response.content == ""


def test_429_retry_after_is_honoured_by_the_gateway() -> None:
    server = Server(
        httpx2.Response(
            429,
            json=error_body("Rate limit reached", "rate_limit_exceeded", "requests"),
            headers={"retry-after": "2"},
        ),
        httpx2.Response(200, json=completion("second")),
    )
    sleeps: list[float] = []
    records: list[dict[str, Any]] = []
    gateway = LLMGateway(
        adapter_for(server), sleep=sleeps.append, record=lambda k, d: records.append(d)
    )
    assert gateway.chat([Message(role="user", content="x")], "s").content == "second"
    assert sleeps == [2.0]
    assert records[0]["attempts"] == 2
    assert KEY not in repr(records)


def test_insufficient_quota_is_not_retried() -> None:
    server = Server(
        httpx2.Response(429, json=error_body("quota", "insufficient_quota", "insufficient_quota"))
    )
    with pytest.raises(HRMError) as caught:
        ask(adapter_for(server))
    assert (caught.value.code, caught.value.recoverable) == (ErrorCode.PROVIDER_ERROR, False)


def test_500_is_recoverable() -> None:
    server = Server(httpx2.Response(500, json=error_body("oops", None, "server_error")))
    with pytest.raises(HRMError) as caught:
        ask(adapter_for(server))
    assert (caught.value.code, caught.value.recoverable) == (ErrorCode.PROVIDER_ERROR, True)
    assert caught.value.context["status_code"] == 500


def test_context_length_and_content_filter_errors() -> None:
    server = Server(
        httpx2.Response(400, json=error_body("too many tokens", "context_length_exceeded")),
        httpx2.Response(400, json=error_body("flagged", "content_filter")),
    )
    adapter = adapter_for(server)
    with pytest.raises(HRMError) as caught:
        ask(adapter)
    assert caught.value.code is ErrorCode.TOKEN_LIMIT
    with pytest.raises(HRMError) as caught:
        ask(adapter)
    assert caught.value.code is ErrorCode.CONTENT_FILTERED


def test_timeout_maps_to_timeout() -> None:
    def slow() -> httpx2.Response:
        raise httpx2.ReadTimeout("slow")

    with pytest.raises(HRMError) as caught:
        ask(adapter_for(Server(slow), timeout_ms=900))
    assert caught.value.code is ErrorCode.TIMEOUT
    assert caught.value.context["budget_ms"] == 900


def sse(*chunks: dict[str, Any]) -> httpx2.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> Any:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": choices,
        "usage": usage,
    }


def test_stream_deltas_finish_and_usage() -> None:
    server = Server(
        sse(
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, finish="stop"),
            chunk(None, usage={"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}),
        )
    )
    adapter = adapter_for(server)
    chunks = list(adapter.stream([Message(role="user", content="x")], "s"))
    body = server.bodies[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert [c.delta for c in chunks] == ["Hel", "lo", ""]
    final = chunks[-1]
    assert final.done and final.accumulated == "Hello" and final.finish_reason == "stop"
    assert (final.input_tokens, final.output_tokens) == (9, 2)


def test_stream_content_filter() -> None:
    server = Server(sse(chunk({"content": "I can"}), chunk({}, finish="content_filter")))
    chunks = list(adapter_for(server).stream([Message(role="user", content="x")], "s"))
    assert chunks[-1].finish_reason == "content_filter"


def test_missing_key_without_base_url_is_a_validation_error() -> None:
    with pytest.raises(HRMError) as caught:
        OpenAIAdapter(LLMConfig(provider="openai"))
    assert "OPENAI_API_KEY" in caught.value.message


def test_repr_of_config_hides_the_key() -> None:
    assert KEY not in repr(LLMConfig(provider="openai", api_key=KEY))


class _WatchedBody(httpx2.SyncByteStream):
    """An event stream whose closing is seen: a server (Ollama, vLLM) stops generating when
    the client closes its connection."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.closed = False

    def __iter__(self) -> Any:
        for event in self.events:
            yield f"data: {json.dumps(event)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    def close(self) -> None:
        self.closed = True


def test_a_stream_the_caller_stops_reading_closes_the_connection() -> None:
    body = _WatchedBody([chunk({"content": f"word {i} "}) for i in range(50)])
    server = Server(
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    )
    stream = adapter_for(server).stream([Message(role="user", content="x")], "s")
    assert next(stream).delta == "word 0 "
    stream.close()  # Ctrl-C, or a loop recognised: the caller stops reading
    assert body.closed
