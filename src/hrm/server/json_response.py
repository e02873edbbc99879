"""The server's JSON response: Starlette's, written by orjson.

Every answer the server gives is a JSON body, and a chat completion's ``hrm`` object holds the
turn's decision summary: Starlette's `JSONResponse` writes it with the standard encoder, about
five times orjson's time. The JSON is the same (compact separators, UTF-8 kept; a float with an
exponent is written ``1e-7`` where Python writes ``1e-07``, the same number); what orjson
refuses (an integer past 64 bits) takes Starlette's own path. A NaN or an infinity, which JSON
cannot hold, is written ``null``, where Starlette's encoder refused the whole body (a 500 for a
score that went wrong in one field).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse as _StarletteJSONResponse

__all__ = ["JSONResponse"]


class JSONResponse(_StarletteJSONResponse):
    """`starlette.responses.JSONResponse`, rendered by orjson."""

    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content)
        except orjson.JSONEncodeError:
            return super().render(content)
