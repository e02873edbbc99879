"""``POST /v1/chat/completions`` and ``GET /v1/models[/{id}]``: a governed turn behind OpenAI's
protocol.

Order of checks on a completion: the key (401, nothing read), the body's size (413 before it is
read in full), its encoding and syntax (400), its fields (400), the model name (404), then the
stack's turn (409 when it stays busy). Nothing is written before the turn starts, so no 4xx
writes anything (the one exception is a 403, whose refusal is recorded).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hrm.errors import HRMError
from hrm.server.api_errors import APIError, from_hrm_error
from hrm.server.chat import TurnOutcome
from hrm.server.chat_request import ChatRequest, parse_chat_request, read_json_body
from hrm.server.json_response import JSONResponse
from hrm.server.openai_format import (
    DONE,
    StreamHead,
    chunk,
    completion,
    model_list,
    model_object,
    sse,
)
from hrm.server.state import ServerState, authenticate, state_of

__all__ = ["MODEL_ID", "chat_completions", "list_models", "read_chat_request", "retrieve_model"]

MODEL_ID = "hrm"
"""The one model this server serves: the governed assistant over the configured provider."""
_CREATED = int(time.time())


async def list_models(request: Request) -> Response:
    """The models a client may name (one: the governed assistant)."""
    authenticate(request)
    return JSONResponse(model_list([(MODEL_ID, _CREATED)]))


async def retrieve_model(request: Request) -> Response:
    """One model by id, as ``client.models.retrieve`` asks; 404 for any but the served one."""
    authenticate(request)
    model_id = request.path_params["model_id"]
    if model_id != MODEL_ID:
        raise _unknown_model(model_id)
    return JSONResponse(model_object(MODEL_ID, _CREATED))


async def read_chat_request(request: Request, state: ServerState) -> ChatRequest:
    """The request's body, checked in the order the module docstring gives."""
    chat = parse_chat_request(await read_json_body(request, limit=state.settings.body_limit))
    if chat.model != MODEL_ID:
        raise _unknown_model(chat.model)
    return chat


def _unknown_model(model_id: str) -> APIError:
    return APIError(
        404,
        f"The model {model_id!r} does not exist on this server: it serves {MODEL_ID!r}, "
        "a governed assistant over the configured provider (GET /v1/models)",
        code="model_not_found", param="model",
    )


async def chat_completions(request: Request) -> Response:
    """One governed turn, answered as a chat completion (streamed when asked)."""
    state = state_of(request)
    principal = authenticate(request)
    chat = await read_chat_request(request, state)
    if chat.stream:
        return await _streamed(state, principal.agent_class, chat)
    outcome = await state.pool.turn(principal.agent_class, chat, replies=state.replies)
    if outcome.failure is not None:
        return failure_response(outcome)
    return JSONResponse(completion(
        completion_id=_completion_id(), created=int(time.time()), model=chat.model,
        content=outcome.response, usage=outcome.usage, hrm=outcome.extension.to_dict(),
    ))


def failure_response(outcome: TurnOutcome) -> JSONResponse:
    """The provider's failure as an OpenAI error, with the recorded turn's ``hrm`` object."""
    assert outcome.failure is not None
    error = from_hrm_error(outcome.failure)
    return JSONResponse(
        error.body(hrm=outcome.extension.to_dict()), status_code=error.status,
        headers=error.headers,
    )


def _completion_id() -> str:
    # One id per response, as OpenAI's; the turn it came from is the ``hrm`` object's.
    return f"chatcmpl-{uuid.uuid4().hex}"


async def _streamed(state: ServerState, agent_class: str, chat: ChatRequest) -> Response:
    """Start the turn; answer with a stream once its first words (or its end) arrive.

    Waiting for the first piece lets a turn refused before it speaks (busy stack, provider
    down) still answer with its own status instead of a 200 stream holding an error.
    """
    loop = asyncio.get_running_loop()
    pieces: asyncio.Queue[str | None] = asyncio.Queue()

    def on_text(piece: str) -> None:
        loop.call_soon_threadsafe(pieces.put_nowait, piece)

    turn = asyncio.ensure_future(
        state.pool.turn(agent_class, chat, replies=state.replies, on_text=on_text)
    )
    # After the pieces: each was queued on the loop before the turn's end was.
    turn.add_done_callback(lambda _turn: pieces.put_nowait(None))
    turn.add_done_callback(_retrieve)
    first_piece = asyncio.ensure_future(pieces.get())
    await asyncio.wait({turn, first_piece}, return_when=asyncio.FIRST_COMPLETED)
    if not first_piece.done():
        first_piece.cancel()
        turn.result()  # refused before it started: raises (409, 503 on shutdown)
        first: str | None = None
    else:
        first = first_piece.result()
    if first is None:
        outcome = await turn
        if outcome.failure is not None:
            return failure_response(outcome)
    return StreamingResponse(
        _events(chat, first, pieces, turn), media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _events(
    chat: ChatRequest,
    first: str | None,
    pieces: asyncio.Queue[str | None],
    turn: asyncio.Future[TurnOutcome],
) -> AsyncIterator[bytes]:
    head = StreamHead(
        completion_id=_completion_id(), created=int(time.time()), model=chat.model,
        include_usage=chat.include_usage,
    )
    yield sse(chunk(head, delta={"role": "assistant", "content": ""}))
    shown: list[str] = []
    if first is not None:
        shown.append(first)
        yield sse(chunk(head, delta={"content": first}))
        while (piece := await pieces.get()) is not None:
            shown.append(piece)
            yield sse(chunk(head, delta={"content": piece}))
    try:
        outcome = await turn
    except (HRMError, APIError) as exc:  # the stream has begun: its status cannot change now
        error = from_hrm_error(exc) if isinstance(exc, HRMError) else exc
        yield sse(error.body())
        yield DONE
        return
    rest = _rest(outcome.response, "".join(shown))
    if rest:
        yield sse(chunk(head, delta={"content": rest}))
    if outcome.failure is not None:
        yield sse(from_hrm_error(outcome.failure).body(hrm=outcome.extension.to_dict()))
        yield DONE
        return
    yield sse(chunk(head, delta={}, finish_reason="stop", hrm=outcome.extension.to_dict()))
    if chat.include_usage:
        yield sse(chunk(head, usage=outcome.usage))
    yield DONE


def _rest(response: str, shown: str) -> str:
    """What of the final answer the client has not been sent.

    The turn's answer may add notes after the model's words, or replace them when the call
    failed part-way; a stream cannot take words back, so a replacement follows what was shown.
    """
    if response.startswith(shown):
        return response[len(shown):]
    return f"\n\n{response}"


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
