"""Claude through the official ``anthropic`` SDK (001 §11.3 ``ClaudeAdapter``).

The SDK's own retries are off (``max_retries=0``): the gateway's one retry policy applies.
SDK exceptions become `HRMError` here, where they enter. Differences from 001 §11.3, because
the current SDK and API differ from the spec's sketch:

- ``temperature`` is not sent: the Messages API of SDK 2.x no longer takes it.
- ``count_tokens`` is a local estimate: the SDK's counter is a network call, and budgets are
  checked before every call.
- System-role messages in the list are folded into ``system`` (the API accepts only user and
  assistant turns); ``json_mode`` appends "Return only JSON." to it.
- ``stop_reason`` maps to 001's finish reasons: ``refusal`` → ``content_filter``;
  ``max_tokens`` and ``model_context_window_exceeded`` → ``length``; the rest → ``stop``.
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
    import anthropic
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from hrm._extras import MissingExtraError

    raise MissingExtraError(
        "The anthropic provider", "the anthropic SDK", extra="anthropic", module="anthropic"
    ) from exc

if TYPE_CHECKING:
    from hrm.config import LLMConfig

__all__ = ["DEFAULT_MODEL", "ENV_ANTHROPIC_API_KEY", "ClaudeAdapter"]

DEFAULT_MODEL = "claude-sonnet-4-6"
"""Used when the config names no model."""
ENV_ANTHROPIC_API_KEY = "ANTHROPIC_API_KEY"
"""Where the key is read from when neither ``api_key`` nor ``api_key_env`` supplies one."""

_DEFAULT_MAX_TOKENS = 4096
_DEFAULT_TIMEOUT_MS = 60_000
_JSON_INSTRUCTION = "Return only JSON."
_FINISH = {
    "refusal": FINISH_CONTENT_FILTER,
    "max_tokens": FINISH_LENGTH,
    "model_context_window_exceeded": FINISH_LENGTH,
}


def _api_key(config: LLMConfig) -> str:
    key = api_key_for(config, ENV_ANTHROPIC_API_KEY)
    if not key:
        raise HRMError.validation_failed(
            "No API key for the anthropic provider: set "
            f"{config.api_key_env or ENV_ANTHROPIC_API_KEY} or llm.api_key",
            key="llm.api_key",
        )
    return key


class ClaudeAdapter:
    """The ``anthropic`` provider.

    Args:
        config: LLM settings (``api_key``/``api_key_env``, ``model``, ``max_tokens``,
            ``base_url``, ``timeout_ms``).
        http_client: An ``httpx2.Client`` for the SDK to use (tests pass one over a mock
            transport; proxies and custom TLS go here too).
    """

    def __init__(self, config: LLMConfig, *, http_client: Any | None = None) -> None:
        self._model = config.model or DEFAULT_MODEL
        self._max_tokens = config.max_tokens or _DEFAULT_MAX_TOKENS
        self._timeout_ms = config.timeout_ms or _DEFAULT_TIMEOUT_MS
        self.client = anthropic.Anthropic(
            api_key=_api_key(config),
            base_url=config.base_url or None,
            timeout=self._timeout_ms / 1000,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def provider(self) -> str:
        """Always ``anthropic``."""
        return "anthropic"

    @property
    def model(self) -> str:
        """The configured model id."""
        return self._model

    def count_tokens(self, text: str) -> int:
        """A local estimate (see the module docstring)."""
        return estimate_tokens(text)

    def _params(self, messages: list[Message], system: str, call: LLMCallConfig) -> dict[str, Any]:
        extra_system = [m.content for m in messages if m.role == "system"]
        system_text = "\n\n".join([system, *extra_system]).strip()
        if call.json_mode and "json" not in system_text.lower():
            system_text = f"{system_text}\n\n{_JSON_INSTRUCTION}".strip()
        params: dict[str, Any] = {
            "model": call.model or self._model,
            "max_tokens": call.output_limit or self._max_tokens,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
        }
        if system_text:
            params["system"] = system_text
        if call.stop_sequences:
            params["stop_sequences"] = list(call.stop_sequences)
        if call.timeout_ms:
            params["timeout"] = call.timeout_ms / 1000
        return params

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        """One Messages API call."""
        call = config or LLMCallConfig()
        params = self._params(messages, system, call)
        started = time.perf_counter()
        try:
            response = self.client.messages.create(**params)
        except anthropic.AnthropicError as exc:
            raise self._error(exc, call) from exc
        latency = int((time.perf_counter() - started) * 1000)
        content = "".join(
            block.text for block in response.content if getattr(block, "type", "") == "text"
        )
        usage = response.usage
        return LLMResponse(
            content=content,
            model=response.model,
            provider="anthropic",
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.input_tokens + usage.output_tokens,
            finish_reason=_FINISH.get(str(response.stop_reason), FINISH_STOP),
            latency_ms=latency,
            request_id=response.id,
        )

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        """Text deltas as they arrive, then a final chunk with stop reason and usage."""
        call = config or LLMCallConfig()
        params = self._params(messages, system, call)
        accumulated = ""
        try:
            with self.client.messages.stream(**params) as stream:
                for text in stream.text_stream:
                    accumulated += text
                    yield StreamChunk(delta=text, accumulated=accumulated, done=False)
                final = stream.get_final_message()
        except anthropic.AnthropicError as exc:
            raise self._error(exc, call) from exc
        yield StreamChunk(
            delta="",
            accumulated=accumulated,
            done=True,
            finish_reason=_FINISH.get(str(final.stop_reason), FINISH_STOP),
            input_tokens=final.usage.input_tokens,
            output_tokens=final.usage.output_tokens,
        )

    def _error(self, exc: anthropic.AnthropicError, call: LLMCallConfig) -> HRMError:
        """The `HRMError` for an SDK exception (never carrying the key)."""
        if isinstance(exc, anthropic.APITimeoutError):
            return HRMError.timeout("anthropic chat", call.timeout_ms or self._timeout_ms)
        if isinstance(exc, anthropic.APIConnectionError):
            return HRMError.provider_error(
                0, f"anthropic: cannot reach the API: {scrub_text(str(exc))}", provider="anthropic"
            )
        if isinstance(exc, anthropic.APIStatusError):
            message = scrub_text(exc.api_message or exc.message)
            error_code = exc.error_code or exc.type
            if exc.type == "overloaded_error":
                error_code = None
            return error_from_status(
                "anthropic",
                exc.status_code,
                message,
                retry_after_ms=parse_retry_after(dict(exc.response.headers)),
                error_code=error_code,
            )
        return HRMError(
            ErrorCode.PROVIDER_ERROR,
            f"anthropic: {type(exc).__name__}: {scrub_text(str(exc))}",
            recoverable=False,
            context={"provider": "anthropic"},
        )
