"""Reading a chat-completions request: the body within its limit, then its fields.

The body is data from anyone who can reach the port: it is refused with 413 before it is read
past the limit, with 400 when it is not UTF-8, holds a lone surrogate, or is not a JSON object,
and every field hrm reads is checked for its type, naming the field at fault. The standard
parameters hrm does not use (``temperature``, ``max_tokens`` …, which chat front-ends send
freely) are checked as OpenAI checks them, then ignored: the governed turn decides how the model
is called (D204); what hrm cannot honour (``response_format`` JSON) is refused
(`hrm.server.chat_params`).

Only the last message is read as the turn's input; it must come from the user. The whole
conversation is hashed, so that a client resending the same conversation (a "regenerate") can
be recognised (D205).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hrm.server.api_errors import APIError, json_kind
from hrm.server.chat_params import MISSING, bad_value, check_parameters, optional

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
_CONTENT_OPTIONAL = frozenset({"assistant"})
"""Roles whose message may have no content (an assistant's tool calls); OpenAI requires it of
every other role."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``–``\\uDFFF`` escape in the raw text: only then can a decoded string hold a lone
surrogate (a valid pair decodes to one character), so most bodies are never walked."""
_SURROGATE = re.compile("[\ud800-\udfff]")


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
            400, f"The request body must be a JSON object, not {json_kind(data)}",
            code="invalid_json",
        )
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(data)
    return data


def _refuse_lone_surrogates(data: dict[str, Any]) -> None:
    """400 naming the first string holding a lone surrogate (``"\\ud800"`` unpaired).

    JSON allows the escape, but no text can hold it: it could not be written to a ledger or
    sent to a model, so it is refused here, before anything is written, rather than failing
    half-way through a turn. Walked with a list, not recursion: the body's nesting is the
    client's to choose.
    """
    pending: list[tuple[str, Any, bool]] = [("", data, False)]
    while pending:
        where, value, is_key = pending.pop()
        if isinstance(value, str):
            found = _SURROGATE.search(value)
            if found is not None:
                place = f"the name of {where}" if is_key else where or "the body"
                raise APIError(
                    400,
                    f"The request body holds a lone UTF-16 surrogate "
                    f"(\\u{ord(found.group()):04x}) in {place}: no text can hold one; send the "
                    "character in UTF-8 or as a complete surrogate pair",
                    code="invalid_encoding", param=where or None,
                )
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                # A key may hold the surrogate itself: the path names it escaped, or the error
                # could not be sent either.
                shown = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", key)
                inside = f"{where}.{shown}" if where else shown
                pending += [(inside, item, False), (inside, key, True)]
        elif isinstance(value, list):
            pending += [
                (f"{where}[{i}]", item, False) for i, item in reversed(list(enumerate(value)))
            ]


def parse_chat_request(data: Mapping[str, Any]) -> ChatRequest:
    """Check the fields hrm reads and return the request; 400 naming the first bad field."""
    model = data.get("model", MISSING)
    if not isinstance(model, str) or not model:
        raise bad_value("model", "must be a non-empty string (GET /v1/models lists them)", model)
    messages = data.get("messages", MISSING)
    if not isinstance(messages, list) or not messages:
        raise bad_value("messages", "must be a non-empty array of messages", messages)
    for index, message in enumerate(messages):
        _check_message(index, message)
    last = messages[-1]
    where = f"messages[{len(messages) - 1}]"
    if last["role"] != "user":
        raise APIError(
            400,
            f"The last message must come from the user, not {last['role']!r}: it is the turn's "
            "input (hrm keeps its own history, so earlier messages are not replayed)",
            param=f"{where}.role", code="invalid_value",
        )
    text = _text_of(last["content"], f"{where}.content")
    if not text.strip():
        raise bad_value(f"{where}.content", "is empty: it is the turn's input", last["content"])
    stream = optional(data, "stream", bool, default=False)
    options = optional(data, "stream_options", dict, default=None)
    include_usage = False
    if options is not None:
        if not stream:
            raise bad_value("stream_options", "is allowed only when stream is true", options)
        include_usage = optional(
            options, "include_usage", bool, default=False, where="stream_options."
        )
    check_parameters(data)
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
        raise bad_value(where, "must be an object with a role and content", message)
    role = message.get("role", MISSING)
    if not isinstance(role, str) or role not in _ROLES:
        raise bad_value(f"{where}.role", f"must be one of {', '.join(sorted(_ROLES))}", role)
    content = message.get("content", MISSING)
    if role in _CONTENT_OPTIONAL and (content is None or content is MISSING):
        return
    if not isinstance(content, str | list):
        raise bad_value(
            f"{where}.content",
            f"must be a string or an array of content parts (a {role} message needs content)",
            content,
        )


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_value(where, "must be a string or an array of text parts", content)
    parts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text":
            raise bad_value(f"{where}[{index}]", "must be a text part ({\"type\": \"text\", …}): "
                            "the governed turn reads text only", part)
        text = part.get("text", MISSING)
        if not isinstance(text, str):
            raise bad_value(f"{where}[{index}].text", "must be a string", text)
        parts.append(text)
    return "\n".join(parts)
