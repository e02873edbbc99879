"""OpenAI's chat-completion objects, byte for byte what its clients parse.

A non-streaming answer is one ``chat.completion``; a streaming one is server-sent events of
``chat.completion.chunk`` objects: a first chunk carrying the role, content deltas, a last
chunk with ``finish_reason``, a usage chunk (empty ``choices``) when the client asked for
``stream_options.include_usage``, then ``data: [DONE]``. Each object carries the turn's ``hrm``
summary where OpenAI has none of its own: on the completion, and on the last chunk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DONE",
    "StreamHead",
    "chunk",
    "completion",
    "model_list",
    "model_object",
    "sse",
]

DONE = b"data: [DONE]\n\n"


def sse(data: dict[str, Any]) -> bytes:
    """One server-sent event holding `data` as JSON."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return b"data: " + text.encode("utf-8") + b"\n\n"


def completion(
    *,
    completion_id: str,
    created: int,
    model: str,
    content: str,
    usage: dict[str, int],
    hrm: dict[str, Any] | None,
) -> dict[str, Any]:
    """A ``chat.completion`` with one choice."""
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": None},
            "logprobs": None,
            "finish_reason": "stop",
        }],
        "usage": usage,
        "system_fingerprint": None,
    }
    if hrm is not None:
        body["hrm"] = hrm
    return body


@dataclass(frozen=True, kw_only=True)
class StreamHead:
    """What every chunk of one stream repeats."""

    completion_id: str
    created: int
    model: str
    include_usage: bool
    """The client asked for usage: every chunk then has ``"usage": null`` but the usage
    chunk, as OpenAI sends them."""


def chunk(
    head: StreamHead,
    *,
    delta: dict[str, Any] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    hrm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``chat.completion.chunk``; ``delta=None`` with `usage` makes the usage chunk."""
    body: dict[str, Any] = {
        "id": head.completion_id,
        "object": "chat.completion.chunk",
        "created": head.created,
        "model": head.model,
        "system_fingerprint": None,
        "choices": [] if delta is None else [{
            "index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason,
        }],
    }
    if head.include_usage:
        body["usage"] = usage
    if hrm is not None:
        body["hrm"] = hrm
    return body


def model_object(model_id: str, created: int) -> dict[str, Any]:
    """``GET /v1/models/{id}``: one model, owned by hrm."""
    return {"id": model_id, "object": "model", "created": created, "owned_by": "hrm"}


def model_list(models: list[tuple[str, int]]) -> dict[str, Any]:
    """``GET /v1/models``: each (id, created) as a model owned by hrm."""
    return {
        "object": "list",
        "data": [model_object(model_id, created) for model_id, created in models],
    }
