"""Reading a chat-completions request: the body within its limit, then its fields.

The body is data from anyone who can reach the port: it is refused with 413 before it is read
past the limit, with 400 when it is not UTF-8 or not a JSON object, and every field hrm reads
is checked for its type, naming the field at fault. Fields hrm does not use (``temperature``,
``top_p``, ``presence_penalty`` …, which chat front-ends send freely) are accepted and ignored:
the governed turn decides how the model is called (D204).

Only the last message is read as the turn's input; it must come from the user. The whole
conversation is hashed, so that a client resending the same conversation (a "regenerate") can
be recognised (D205).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hrm.server.api_errors import APIError

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = [
    "ChatRequest",
    "parse_chat_request",
    "parse_json_body",
    "read_body",
    "read_json_body",
]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """What a chat-completions request asks of a governed turn."""

    model: str
    text: str
    """The last user message: the turn's input."""
    conversation_hash: str
    """SHA-256 over every message's role and content, in order (D205)."""
    messages: int
    stream: bool = False
    include_usage: bool = False
    """``stream_options.include_usage``: a last chunk with the token counts."""


async def read_body(
    chunks: AsyncIterator[bytes], *, declared_length: str | None, limit: int
) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed `limit` bytes.

    A declared ``Content-Length`` over the limit is refused before a byte is read; a chunked
    body is counted as it arrives and refused when it passes the limit.
    """
    if declared_length is not None:
        try:
            declared = int(declared_length)
        except ValueError:
            raise APIError(
                400, "Content-Length is not a number", code="invalid_request"
            ) from None
        if declared > limit:
            raise _too_large(declared, limit)
    received = bytearray()
    async for chunk in chunks:
        received += chunk
        if len(received) > limit:
            raise _too_large(len(received), limit)
    return bytes(received)


async def read_json_body(request: Request, *, limit: int) -> dict[str, Any]:
    """A request's body as a JSON object, within `limit` bytes (413, 400 as above)."""
    body = await read_body(
        request.stream(), declared_length=request.headers.get("content-length"), limit=limit
    )
    return parse_json_body(body)


def _too_large(size: int, limit: int) -> APIError:
    return APIError(
        413,
        f"The request body ({size} bytes or more) is over this server's limit of {limit} bytes: "
        "send a shorter conversation (hrm keeps its own history; only the last message is new)",
        code="request_too_large",
    )


def parse_json_body(body: bytes) -> dict[str, Any]:
    """The body as a JSON object; 400 naming what is wrong (UTF-8, JSON syntax, not an object)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise APIError(
            400, f"The request body is not valid UTF-8 (byte {exc.start}): send JSON in UTF-8",
            code="invalid_encoding",
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise APIError(
            400,
            f"The request body is not valid JSON: {exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}",
            code="invalid_json",
        ) from None
    if not isinstance(data, dict):
        raise APIError(
            400, f"The request body must be a JSON object, not {_kind(data)}", code="invalid_json"
        )
    return data


def parse_chat_request(data: Mapping[str, Any]) -> ChatRequest:
    """Check the fields hrm reads and return the request; 400 naming the first bad field."""
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model", "must be a non-empty string (GET /v1/models lists them)", model)
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages", "must be a non-empty array of messages", messages)
    for index, message in enumerate(messages):
        _check_message(index, message)
    last = messages[-1]
    if last["role"] != "user":
        raise APIError(
            400,
            f"The last message must come from the user, not {last['role']!r}: it is the turn's "
            "input (hrm keeps its own history, so earlier messages are not replayed)",
            param=f"messages[{len(messages) - 1}].role", code="invalid_value",
        )
    text = _text_of(last["content"], f"messages[{len(messages) - 1}].content")
    if not text.strip():
        raise _bad(f"messages[{len(messages) - 1}].content", "is empty", text)
    stream = _optional(data, "stream", bool, default=False)
    options = _optional(data, "stream_options", dict, default=None)
    include_usage = False
    if options is not None:
        if not stream:
            raise _bad("stream_options", "is allowed only when stream is true", options)
        include_usage = _optional(
            options, "include_usage", bool, default=False, where="stream_options."
        )
    n = _optional(data, "n", int, default=1)
    if n != 1:
        raise _bad("n", "must be 1: a governed turn gives one answer", n)
    if data.get("tools"):
        raise _bad("tools", "is not supported: the governed turn decides which tools run", "…")
    return ChatRequest(
        model=model, text=text, conversation_hash=conversation_hash(messages),
        messages=len(messages), stream=stream, include_usage=include_usage,
    )


def conversation_hash(messages: list[dict[str, Any]]) -> str:
    """SHA-256 over each message's role and content, in order (other fields are not hashed)."""
    canonical = json.dumps(
        [[m["role"], m.get("content")] for m in messages],
        ensure_ascii=False, separators=(",", ":"), sort_keys=True,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _check_message(index: int, message: Any) -> None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise _bad(where, "must be an object with a role and content", message)
    role = message.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        raise _bad(f"{where}.role", f"must be one of {', '.join(sorted(_ROLES))}", role)
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise _bad(f"{where}.content", "must be a string or an array of content parts", content)


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _bad(where, "must be a string or an array of text parts", content)
    parts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text":
            raise _bad(f"{where}[{index}]", "must be a text part ({\"type\": \"text\", …}): "
                       "the governed turn reads text only", part)
        text = part.get("text")
        if not isinstance(text, str):
            raise _bad(f"{where}[{index}].text", "must be a string", text)
        parts.append(text)
    return "\n".join(parts)


def _optional(
    data: Mapping[str, Any], name: str, kind: type, *, default: Any, where: str = ""
) -> Any:
    value = data.get(name)
    if value is None:
        return default
    # bool is an int in Python: an integer field must not take true/false, nor the reverse.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _bad(f"{where}{name}", f"must be {_article(kind)}", value)
    return value


def _article(kind: type) -> str:
    return {bool: "a boolean", int: "an integer", dict: "an object", str: "a string"}.get(
        kind, kind.__name__
    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _bad(param: str, problem: str, value: Any) -> APIError:
    return APIError(
        400, f"'{param}' {problem} (got {_kind(value)})", param=param, code="invalid_value"
    )
