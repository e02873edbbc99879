"""The ungoverned baseline `bench/bench_serve.py` measures the governed endpoint against.

``POST /v1/bench/passthrough`` takes the same request as ``/v1/chat/completions``, checks the
same key and body, and sends the last user message straight to the same model in a thread —
no arbitration, no gates, no memory, no ledger. It is mounted only when the server runs in
bench mode (``HRM_SERVE_BENCH=1``); a normal server answers it with 404 (D212).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hrm.config import LLMConfig, load_config
from hrm.home import HRMHome
from hrm.llm.factory import LLMAdapterFactory
from hrm.llm.types import Message
from hrm.server.json_response import JSONResponse
from hrm.server.openai_api import read_chat_request
from hrm.server.openai_format import completion
from hrm.server.settings import ServeSettings
from hrm.server.state import authenticate, state_of

__all__ = ["PATH", "route"]

PATH = "/v1/bench/passthrough"
_SYSTEM = "You are a helpful assistant."


def route(settings: ServeSettings, model: Any) -> Route:
    """The pass-through route over the model every stack uses."""
    adapter = _adapter(settings, model)

    async def passthrough(request: Request) -> Response:
        authenticate(request)
        chat = await read_chat_request(request, state_of(request))
        reply = await asyncio.to_thread(adapter.chat, [Message("user", chat.text)], _SYSTEM)
        return JSONResponse(completion(
            completion_id=f"chatcmpl-{uuid.uuid4().hex}", created=int(time.time()),
            model=chat.model, content=reply.content,
            usage={"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
                   "total_tokens": reply.total_tokens},
            hrm=None,
        ))

    return Route(PATH, passthrough, methods=["POST"])


def _adapter(settings: ServeSettings, model: Any) -> Any:
    if model is not None and not isinstance(model, str | LLMConfig):
        return model  # an adapter given to the app (tests)
    if isinstance(model, LLMConfig):
        return LLMAdapterFactory.create(model)
    config = load_config(HRMHome(settings.home)).config.llm
    if isinstance(model, str):
        config = LLMConfig(**(config.__dict__ | {"provider": model}))
    return LLMAdapterFactory.create(config)
