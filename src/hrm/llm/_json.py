"""Asking a model for structure: request JSON, extract it, validate it, or get ``None``.

Model output is a trust boundary (STYLE §4). Small models wrap JSON in prose or code fences,
truncate it, or ignore the request; callers that want structure (signal estimation,
classification, plan generation) must treat all of that as "no advice" and fall back to their
deterministic rules, so `chat_json` returns ``None`` instead of raising for malformed output and
for provider failures. The gateway has already recorded the failed call as a work order.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from hrm.errors import ErrorCode, HRMError
from hrm.llm.types import FINISH_CONTENT_FILTER, ILLMAdapter, LLMCallConfig, Message

__all__ = ["JSON_INSTRUCTION", "chat_json", "extract_json"]

logger = logging.getLogger(__name__)

JSON_INSTRUCTION = "Return only JSON."
"""Appended to the system prompt (once) when a caller asks for structure."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_PROVIDER_FAILURES = frozenset(
    {
        ErrorCode.RATE_LIMIT,
        ErrorCode.TOKEN_LIMIT,
        ErrorCode.CONTENT_FILTERED,
        ErrorCode.PROVIDER_ERROR,
        ErrorCode.TIMEOUT,
        ErrorCode.BUDGET_EXHAUSTED,
    }
)


def extract_json(text: str) -> Any | None:
    """The first JSON object or array in ``text``, or ``None`` when there is none.

    Looks inside a fenced code block first, then at each ``{`` or ``[`` in order, decoding the
    longest valid JSON value that starts there (prose around it is ignored). Scalars alone are
    not structure and are not returned.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for index, char in enumerate(candidate):
            if char not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(candidate, index)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict | list):
                return value
    return None


def chat_json(
    adapter: ILLMAdapter,
    messages: list[Message],
    system: str,
    *,
    config: LLMCallConfig | None = None,
    schema: Mapping[str, Any] | None = None,
    validate: Callable[[Any], bool] | None = None,
    purpose: str | None = None,
) -> Any | None:
    """Ask ``adapter`` for JSON and return the parsed value, or ``None`` when unusable.

    Args:
        adapter: Any adapter, normally the stack's `LLMGateway`.
        messages: The conversation; the last message usually holds the question.
        system: The system prompt; `JSON_INSTRUCTION` is appended unless it says so already.
        config: Per-call settings; ``json_mode`` is switched on.
        schema: A JSON Schema the value must satisfy (checked with ``jsonschema``).
        validate: A predicate the value must satisfy, for checks a schema cannot express.
        purpose: Why the call is made; recorded with the work order.

    Returns:
        The parsed value, or ``None`` when the answer holds no JSON, fails ``schema`` or
        ``validate``, was filtered, or the provider failed (rate limit, timeout, budget...).

    Raises:
        HRMError: For caller mistakes (``VALIDATION_FAILED``, an invalid ``schema``) and
            internal errors, which a fallback would only hide.
    """
    base = LLMCallConfig(json_mode=True, purpose=purpose)
    call = (config or LLMCallConfig()).resolve(base)
    prompt = system if "json" in system.lower() else f"{system.rstrip()}\n\n{JSON_INSTRUCTION}"
    try:
        response = adapter.chat(messages, prompt.strip(), call)
    except HRMError as exc:
        if exc.code not in _PROVIDER_FAILURES:
            raise
        logger.warning("structured call (%s) failed: %s", call.purpose or "unnamed", exc.code.value)
        return None
    if response.finish_reason == FINISH_CONTENT_FILTER:
        logger.warning("structured call (%s) was filtered", call.purpose or "unnamed")
        return None
    value = extract_json(response.content)
    if value is None:
        logger.info("structured call (%s) returned no JSON", call.purpose or "unnamed")
        return None
    if schema is not None and not _matches(value, schema):
        logger.info("structured call (%s) returned JSON outside the schema", call.purpose)
        return None
    if validate is not None and not validate(value):
        logger.info("structured call (%s) returned JSON the validator rejected", call.purpose)
        return None
    return value


def _matches(value: Any, schema: Mapping[str, Any]) -> bool:
    import jsonschema

    try:
        jsonschema.validate(value, dict(schema))
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError as exc:
        raise HRMError.validation_failed(f"Invalid JSON schema: {exc.message}") from exc
    return True
