"""The server's JSON response: Starlette's, written by orjson.

Every answer the server gives is a JSON body, and a chat completion's ``hrm`` object holds the
turn's decision summary: Starlette's `JSONResponse` writes it with the standard encoder, about
five times orjson's time. The JSON is the same (compact separators, UTF-8 kept; a float with an
exponent is written ``1e-7`` where Python writes ``1e-07``, the same number); what orjson
refuses (an integer past 64 bits) takes Starlette's own path, and NaN is refused as Starlette
refuses it (``allow_nan=False``) rather than written as ``null``.
"""

from __future__ import annotations

import math
from typing import Any

import orjson
from starlette.responses import JSONResponse as _StarletteJSONResponse

__all__ = ["JSONResponse"]


class JSONResponse(_StarletteJSONResponse):
    """`starlette.responses.JSONResponse`, rendered by orjson."""

    def render(self, content: Any) -> bytes:
        try:
            body = orjson.dumps(content)
        except orjson.JSONEncodeError:
            return super().render(content)
        if b"null" in body and _has_nonfinite(content):
            return super().render(content)  # orjson writes NaN as null; refuse it as before
        return body


def _has_nonfinite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_nonfinite(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_nonfinite(item) for item in value)
    return False
