"""The local provider with the real SmolLM2 model (skipped when the extra is not installed)."""

from __future__ import annotations

import pytest

from hrm.config import LLMConfig
from hrm.errors import ErrorCode, HRMError
from hrm.llm import LLMCallConfig, LLMGateway, Message, local
from hrm.llm.local import LocalAdapter, _drain, _raise_for_error, is_local_model_installed

needs_model = pytest.mark.skipif(
    not is_local_model_installed(), reason="the local model is not installed"
)
# These tests are about behaviour, not speed, so they must hold on a busy 2-core machine. One
# decoding thread: llama.cpp's threads wait for each other by spinning, so two of them (per xdist
# worker) on cores other processes also want slow decoding far more than the lost share of CPU.
# A call's bound is 10 minutes instead of the product's 60 s, which a loaded machine overran.
UNHURRIED = LLMConfig(provider="local", timeout_ms=600_000, n_threads=1, max_retries=0)


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
def test_chat_and_stream_with_the_real_model() -> None:
    adapter = LocalAdapter(UNHURRIED)
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
    adapter = LocalAdapter(LLMConfig(provider="local", n_threads=1))
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


class _CountingServer:
    """The real in-process server, counting the tokens each request decoded.

    ``ignore_eos`` makes the model write until ``max_tokens`` unless it is stopped, so a count
    well below the limit can only mean that the adapter stopped the decode.
    """

    def __init__(self, server: object) -> None:
        self.server = server
        self.decoded: list[int] = []

    def handle_chat_completions(self, request: dict[str, object], callback: object = None) -> object:
        assert callable(callback), "every local call decodes as a stream, so it can be stopped"
        count = len(self.decoded)
        self.decoded.append(0)

        def counting(chunk: object) -> object:
            self.decoded[count] += 1
            return callback(chunk)

        return self.server.handle_chat_completions(  # type: ignore[attr-defined]
            {**request, "ignore_eos": True, "temperature": 0}, counting
        )


def _wait_for_decodes() -> None:
    """Join every decode thread still running (each ends at its limit or when stopped)."""
    with local._servers_lock:
        threads = list(local._inflight)
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive()


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
def test_a_call_nobody_waits_for_stops_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = LocalAdapter(UNHURRIED)
    server = _CountingServer(adapter._server())
    monkeypatch.setattr(adapter, "_server", lambda: server)
    story = [Message(role="user", content="Write a long story about a dragon who learns to fly.")]
    limit = LLMCallConfig(max_tokens=200)

    whole = adapter.chat(story, "You are a storyteller.", limit)  # the control: to the limit
    assert whole.finish_reason == "length" and server.decoded[0] >= 190

    stream = adapter.stream(story, "You are a storyteller.", limit)
    for _, _chunk in zip(range(3), stream, strict=False):
        pass
    stream.close()  # the person pressed Ctrl-C, or the caller stopped reading
    _wait_for_decodes()
    assert server.decoded[1] < 60

    with pytest.raises(HRMError) as caught:
        adapter.chat(story, "You are a storyteller.", LLMCallConfig(max_tokens=200, timeout_ms=150))
    assert caught.value.code is ErrorCode.TIMEOUT
    _wait_for_decodes()
    assert server.decoded[2] < 100

    after = adapter.chat([Message(role="user", content="Say hi.")], "s", LLMCallConfig(max_tokens=3))
    assert after.content and after.output_tokens == 3


def test_the_server_s_cache_count_is_kept_per_adapter() -> None:
    import queue

    stats = local.PromptCacheStats()
    events: queue.Queue[tuple[str, object]] = queue.Queue()
    events.put(("c", {"choices": [{"delta": {"content": "Hi"}}]}))
    events.put(("c", {"choices": [], "timings": {"cache_n": 30, "prompt_n": 10}}))
    events.put(("end", None))
    list(_drain(events, None, cache=stats))  # type: ignore[arg-type]
    events.put(("c", {"choices": [{"delta": {"content": "Hi"}}]}))  # stopped: no timings
    events.put(("end", None))
    list(_drain(events, None, cache=stats))  # type: ignore[arg-type]
    assert (stats.calls, stats.prompt_tokens, stats.cached_tokens) == (1, 40, 30)
    assert (stats.last_prompt_tokens, stats.last_cached_tokens) == (40, 30)
    assert stats.reused == 0.75
    assert local.PromptCacheStats().reused == 0.0


def _exchange(i: int) -> list[Message]:
    return [
        Message(role="user", content=f"What should the shipping team know about crate {i}?"),
        Message(role="assistant", content=(
            f"Crate {i} holds the spare parts for line {i}; it weighs {i * 7} kg, goes on the "
            f"Friday truck from dock {i % 3}, and the label must name the customer and the "
            "order number, or the depot sends it back.")),
    ]


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
def test_the_next_call_takes_the_conversation_from_the_cache_even_as_it_slides() -> None:
    # D231: one slot keeps the last prompt; llama.cpp evaluates only what follows the shared
    # start, and with n_cache_reuse it also moves the exchanges that slid up when the oldest
    # left the window instead of evaluating them again.
    adapter = LocalAdapter(LLMConfig(provider="local", temperature=0.0))
    system = "You answer the shipping team briefly."
    short = LLMCallConfig(max_tokens=4)
    first = [*_exchange(1), *_exchange(2), *_exchange(3),
             Message(role="user", content="And crate 4?")]
    adapter.chat(first, system, short)
    again = adapter.chat([*first[:-1], Message(role="user", content="And crate 5?")], system, short)
    cache = adapter.prompt_cache
    assert again.input_tokens == cache.last_prompt_tokens
    assert cache.last_cached_tokens >= 0.9 * cache.last_prompt_tokens  # only the new question
    slid = [*_exchange(2), *_exchange(3), *_exchange(4),
            Message(role="user", content="And crate 6?")]
    adapter.chat(slid, system, short)
    # Without moving cached stretches, only the system prompt (about a tenth) would be reused;
    # exchanges 2 and 3 move up, and exchange 4 and the question are new.
    assert cache.last_cached_tokens >= 0.5 * cache.last_prompt_tokens
    assert cache.calls == 3
