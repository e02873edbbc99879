"""OpenAI, and any OpenAI-compatible server, through the official ``openai`` SDK (001 §11.3).

With ``base_url`` set the same adapter talks to Ollama (``http://localhost:11434/v1``), vLLM,
llama.cpp's server or LM Studio; such servers often need no key, so a placeholder is sent when
none is configured. The SDK's own retries are off (``max_retries=0``): the gateway's one retry
policy applies. SDK exceptions become `HRMError` here, where they enter.

Request shape: the system prompt is the first message; the answer limit is sent as
``max_completion_tokens`` to api.openai.com (``max_tokens`` is deprecated there) and as
``max_tokens`` to compatible servers, which know only that; ``json_mode`` sends
``response_format={"type": "json_object"}``. Streams ask for usage in the last chunk.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hrm.errors import ErrorCode, HRMError
from hrm.llm._retry import error_from_status, parse_retry_after
from hrm.llm.factory import api_key_for
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
from hrm.scrubbing import scrub_text

try:
    import openai
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from hrm._extras import MissingExtraError

    raise MissingExtraError(
        "The openai provider", "the openai SDK", extra="openai", module="openai"
    ) from exc

if TYPE_CHECKING:
    from hrm.config import LLMConfig

__all__ = ["DEFAULT_MODEL", "ENV_OPENAI_API_KEY", "NO_KEY_PLACEHOLDER", "OpenAIAdapter"]

DEFAULT_MODEL = "gpt-4o"
"""Used when the config names no model (001 §11.3)."""
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
"""Where the key is read from when neither ``api_key`` nor ``api_key_env`` supplies one."""
NO_KEY_PLACEHOLDER = "not-needed"
"""Sent as the key to a compatible server (``base_url`` set) when none is configured."""

_DEFAULT_MAX_TOKENS = 4096
_DEFAULT_TIMEOUT_MS = 60_000
_JSON_INSTRUCTION = "Return only JSON."
_FINISH = {"length": FINISH_LENGTH, "content_filter": FINISH_CONTENT_FILTER}


def _api_key(config: LLMConfig) -> str:
    key = api_key_for(config, ENV_OPENAI_API_KEY)
    if key:
        return key
    if config.base_url:
        return NO_KEY_PLACEHOLDER
    raise HRMError.validation_failed(
        f"No API key for the openai provider: set {config.api_key_env or ENV_OPENAI_API_KEY} "
        "or llm.api_key (or llm.base_url for a local OpenAI-compatible server)",
        key="llm.api_key",
    )


class OpenAIAdapter:
    """The ``openai`` provider (OpenAI or any compatible server via ``base_url``).

    Args:
        config: LLM settings (``api_key``/``api_key_env``, ``model``, ``temperature``,
            ``max_tokens``, ``base_url``, ``timeout_ms``).
        http_client: An ``httpx2.Client`` for the SDK (tests pass one over a mock transport).
    """

    def __init__(self, config: LLMConfig, *, http_client: Any | None = None) -> None:
        self._model = config.model or DEFAULT_MODEL
        self._temperature: float | None = config.temperature
        self._max_tokens = config.max_tokens or _DEFAULT_MAX_TOKENS
        self._timeout_ms = config.timeout_ms or _DEFAULT_TIMEOUT_MS
        self._compatible = bool(config.base_url)
        self.client = openai.OpenAI(
            api_key=_api_key(config),
            base_url=config.base_url or None,
            timeout=self._timeout_ms / 1000,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def provider(self) -> str:
        """Always ``openai`` (also for compatible servers)."""
        return "openai"

    @property
    def model(self) -> str:
        """The configured model id."""
        return self._model

    def count_tokens(self, text: str) -> int:
        """A local estimate: no tokenizer download, no network."""
        return estimate_tokens(text)

    def _params(self, messages: list[Message], system: str, call: LLMCallConfig) -> dict[str, Any]:
        system_text = system
        if call.json_mode and "json" not in system_text.lower():
            system_text = f"{system_text}\n\n{_JSON_INSTRUCTION}".strip()
        wire = [{"role": "system", "content": system_text}] if system_text else []
        wire.extend({"role": m.role, "content": m.content} for m in messages)
        limit_key = "max_tokens" if self._compatible else "max_completion_tokens"
        params: dict[str, Any] = {
            "model": call.model or self._model,
            "messages": wire,
            limit_key: call.output_limit or self._max_tokens,
        }
        temperature = call.temperature if call.temperature is not None else self._temperature
        if temperature is not None:
            params["temperature"] = temperature
        if call.stop_sequences:
            params["stop"] = list(call.stop_sequences)
        if call.json_mode:
            params["response_format"] = {"type": "json_object"}
        if call.timeout_ms:
            params["timeout"] = call.timeout_ms / 1000
        return params

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        """One Chat Completions call."""
        call = config or LLMCallConfig()
        params = self._params(messages, system, call)
        started = time.perf_counter()
        try:
            response = self.client.chat.completions.create(**params)
        except openai.OpenAIError as exc:
            raise self._error(exc, call) from exc
        latency = int((time.perf_counter() - started) * 1000)
        if not response.choices:
            raise HRMError.provider_error(
                502, "openai: the response has no choices", provider="openai"
            )
        choice = response.choices[0]
        content = choice.message.content or ""
        usage = response.usage
        input_tokens = usage.prompt_tokens if usage else self._estimate_prompt(params)
        output_tokens = usage.completion_tokens if usage else estimate_tokens(content)
        return LLMResponse(
            content=content,
            model=response.model or params["model"],
            provider="openai",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            finish_reason=_FINISH.get(str(choice.finish_reason), FINISH_STOP),
            latency_ms=latency,
            request_id=response.id,
        )

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """Content deltas as they arrive, then a final chunk with finish reason and usage."""
        call = config or LLMCallConfig()
        params = {
            **self._params(messages, system, call),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        accumulated = ""
        finish = FINISH_STOP
        input_tokens: int | None = None
        output_tokens: int | None = None
        try:
            # Closed on the way out, however it is left: a caller that stops reading (Ctrl-C, a
            # closed stream) closes the connection, and a server (Ollama, vLLM, llama.cpp)
            # stops generating for nobody.
            with self.client.chat.completions.create(**params) as events:
                for event in events:
                    if event.usage is not None:
                        input_tokens = event.usage.prompt_tokens
                        output_tokens = event.usage.completion_tokens
                    for choice in event.choices:
                        if choice.finish_reason:
                            finish = _FINISH.get(str(choice.finish_reason), FINISH_STOP)
                        delta = choice.delta.content if choice.delta else None
                        if delta:
                            accumulated += delta
                            yield StreamChunk(delta=delta, accumulated=accumulated, done=False)
        except openai.OpenAIError as exc:
            raise self._error(exc, call) from exc
        yield StreamChunk(
            delta="",
            accumulated=accumulated,
            done=True,
            finish_reason=finish,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    @staticmethod
    def _estimate_prompt(params: dict[str, Any]) -> int:
        return sum(estimate_tokens(str(m["content"])) for m in params["messages"])

    def _error(self, exc: openai.OpenAIError, call: LLMCallConfig) -> HRMError:
        """The `HRMError` for an SDK exception (never carrying the key)."""
        if isinstance(exc, openai.APITimeoutError):
            return HRMError.timeout("openai chat", call.timeout_ms or self._timeout_ms)
        if isinstance(exc, openai.APIConnectionError):
            return HRMError.provider_error(
                0, f"openai: cannot reach the server: {scrub_text(str(exc))}", provider="openai"
            )
        if isinstance(exc, openai.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            message = str(body.get("message") or exc.message)
            return error_from_status(
                "openai",
                exc.status_code,
                scrub_text(message),
                retry_after_ms=parse_retry_after(dict(exc.response.headers)),
                error_code=exc.code,
            )
        if isinstance(exc, openai.ContentFilterFinishReasonError):
            return HRMError.content_filtered("openai")
        return HRMError(
            ErrorCode.PROVIDER_ERROR,
            f"openai: {type(exc).__name__}: {scrub_text(str(exc))}",
            recoverable=False,
            context={"provider": "openai"},
        )
