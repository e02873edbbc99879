"""The local provider with the real SmolLM2 model (skipped when the extra is not installed)."""

from __future__ import annotations

import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMCallConfig, LLMGateway, Message
from hrm.llm.local import LocalAdapter, _drain, _raise_for_error, is_local_model_installed

needs_model = pytest.mark.skipif(
    not is_local_model_installed(), reason="the local model is not installed"
)


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
def test_chat_and_stream_with_the_real_model() -> None:
    adapter = LocalAdapter(LLMConfig(provider="local"))
    gateway = LLMGateway(adapter)
    messages = [Message(role="user", content="Say hello.")]
    response = gateway.chat(messages, "Answer briefly.", LLMCallConfig(max_tokens=6))
    assert response.provider == "local"
    assert response.model.startswith("SmolLM2")
    assert response.content.strip()
    assert 0 < response.output_tokens <= 6
    assert response.input_tokens > 0
    chunks = list(adapter.stream(messages, "Answer briefly.", LLMCallConfig(max_tokens=4)))
    assert chunks[-1].done
    assert chunks[-1].accumulated == "".join(c.delta for c in chunks)
    assert chunks[-1].output_tokens is not None and chunks[-1].output_tokens <= 4


@pytest.mark.local_model
@needs_model
def test_a_timeout_is_a_recoverable_timeout() -> None:
    adapter = LocalAdapter(LLMConfig(provider="local"))
    with pytest.raises(HRMError) as caught:
        adapter.chat(
            [Message(role="user", content="Count to ten.")],
            "s",
            LLMCallConfig(max_tokens=16, timeout_ms=1),
        )
    assert caught.value.code is ErrorCode.TIMEOUT
    assert caught.value.recoverable


def test_server_errors_map_to_hrm_errors() -> None:
    with pytest.raises(HRMError) as caught:
        _raise_for_error({"error": {"code": 400, "message": "context size exceeded"}})
    assert caught.value.code is ErrorCode.TOKEN_LIMIT
    with pytest.raises(HRMError) as caught:
        _raise_for_error({"error": {"code": 400, "message": "bad field"}})
    assert (caught.value.code, caught.value.recoverable) == (ErrorCode.PROVIDER_ERROR, False)
    with pytest.raises(HRMError):
        _raise_for_error(None)
    _raise_for_error({"choices": []})


def test_stream_drain_maps_openai_style_chunks() -> None:
    import queue

    events: queue.Queue[tuple[str, object]] = queue.Queue()
    events.put(("c", {"choices": [{"delta": {"role": "assistant", "content": None}}]}))
    events.put(("c", {"choices": [{"delta": {"content": "Hi"}, "finish_reason": None}]}))
    events.put(("c", {"choices": [{"delta": {}, "finish_reason": "length"}]}))
    events.put(("c", {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}))
    events.put(("end", None))
    chunks = list(_drain(events, None))  # type: ignore[arg-type]
    assert [c.delta for c in chunks] == ["Hi", ""]
    assert chunks[-1].finish_reason == "length"
    assert (chunks[-1].input_tokens, chunks[-1].output_tokens) == (5, 1)


def test_stream_drain_times_out_without_chunks() -> None:
    import queue

    with pytest.raises(HRMError) as caught:
        list(_drain(queue.Queue(), 1))
    assert caught.value.code is ErrorCode.TIMEOUT
