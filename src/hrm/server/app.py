"""The ASGI application of `hrm serve`: its routes, error handling, access log and lifespan.

`create_app` builds the server process's app; `app_from_env` is the factory uvicorn imports.
Routes only parse, call the library (in a turn thread or a turn worker) and render.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hrm.config import load_config
from hrm.errors import HRMError
from hrm.home import HRMHome, initialize
from hrm.server import decisions_api, openai_api, passthrough, web
from hrm.server.api_errors import APIError, from_hrm_error
from hrm.server.auth import SessionSigner
from hrm.server.bridge import StackPool
from hrm.server.chat import ReplyCache, reply_dir
from hrm.server.json_response import JSONResponse
from hrm.server.keys import KeyStore
from hrm.server.settings import ServeSettings
from hrm.server.state import ServerState
from hrm.server.turn_workers import TurnWorkers, WorkerSpec

__all__ = ["ACCESS_LOGGER", "app_from_env", "create_app"]

ACCESS_LOGGER = "hrm.server.access"
logger = logging.getLogger(__name__)
access_log = logging.getLogger(ACCESS_LOGGER)


def create_app(settings: ServeSettings, *, llm: Any = None) -> Starlette:
    """The app for one server process over `settings.home`.

    Args:
        settings: The server's settings.
        llm: The model for every stack: an adapter (tests), or None for ``settings.provider``
            or the home's configuration.
    """
    home = HRMHome(settings.home)
    initialize(home)
    config = load_config(home).config
    model: Any = llm if llm is not None else settings.provider
    if llm is None and settings.model is not None:
        from hrm.config import LLMConfig

        base = config.llm.__dict__ | {"model": settings.model}
        if settings.provider is not None:
            base["provider"] = settings.provider
        model = LLMConfig(**base)
    workers = _turn_workers(settings, home, model, llm is not None)
    state = ServerState(
        settings=settings, home=home, config=config, keys=KeyStore(home),
        pool=StackPool(home, llm=model, stack_wait_s=settings.stack_wait_s,
                       threads=settings.turn_threads, max_open=settings.max_open_stacks,
                       workers=workers),
        replies=ReplyCache(settings.regenerate_window_s, directory=reply_dir(home.root)),
        signer=SessionSigner(home),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if workers is not None:
            workers.start()
        yield
        await state.pool.aclose()  # in-flight turns end and are recorded first
        await asyncio.to_thread(state.replies.close)  # then their replies, for a resend

    app = Starlette(
        routes=_routes(settings, model),
        exception_handlers={
            APIError: _api_error,
            HRMError: _hrm_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
        lifespan=lifespan,
    )
    app.state.hrm = state
    app.add_middleware(AccessLog)
    return app


def _turn_workers(
    settings: ServeSettings, home: HRMHome, model: Any, given_adapter: bool
) -> TurnWorkers | None:
    """The worker processes turns run in with ``--workers N`` (N ≥ 2), else None.

    A model adapter handed to `create_app` (tests, embedding) lives in this process only, so
    its turns stay here whatever the setting.
    """
    if settings.workers < 2 or given_adapter:
        return None
    spec = WorkerSpec(
        home=home.root, llm=model, stack_wait_s=settings.stack_wait_s,
        threads=settings.turn_threads, max_open=settings.max_open_stacks,
        regenerate_window_s=settings.regenerate_window_s,
    )
    return TurnWorkers(spec, settings.workers)


def app_from_env() -> Starlette:
    """The factory uvicorn runs: settings from the environment `hrm serve` set."""
    from hrm.server.runner import configure_logging

    configure_logging()
    return create_app(ServeSettings.from_env())


def _routes(settings: ServeSettings, model: Any) -> list[BaseRoute]:
    routes: list[BaseRoute] = [
        Route("/v1/models", openai_api.list_models, methods=["GET"]),
        # :path, so that an id with a slash ("org/model") is an unknown model, not a route.
        Route("/v1/models/{model_id:path}", openai_api.retrieve_model, methods=["GET"]),
        Route("/v1/chat/completions", openai_api.chat_completions, methods=["POST"]),
        *decisions_api.routes(),
        *web.routes(),
        Mount("/static", StaticFiles(packages=[("hrm.server", "static")]), name="static"),
    ]
    if settings.bench:
        # Ungoverned: for bench/bench_serve.py's baseline only, never in normal serving.
        routes.append(passthrough.route(settings, model))
    return routes


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


def _error(request: Request, error: APIError) -> Response:
    if _wants_json(request):
        return JSONResponse(error.body(), status_code=error.status, headers=error.headers)
    return web.error_page(request, error)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, APIError)
    return _error(request, exc)


async def _hrm_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HRMError)
    return _error(request, from_hrm_error(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        error = APIError(
            404, f"No route {request.method} {request.url.path}: the API is under /v1/ "
            "(chat/completions, models, hrm/…) and the web view at /",
            type="not_found_error", code="unknown_url",
        )
    elif exc.status_code == 405:
        error = APIError(
            405, f"{request.method} is not allowed on {request.url.path}",
            code="method_not_allowed",
        )
    else:
        error = APIError(exc.status_code, str(exc.detail), code="http_error")
    return _error(request, error)


async def _unexpected(request: Request, exc: Exception) -> Response:
    logger.error("request %s %s failed", request.method, request.url.path, exc_info=exc)
    error = APIError(
        500, f"Internal error ({type(exc).__name__}); the server log has the details",
        type="server_error", code="internal_error",
    )
    if _wants_json(request):
        return JSONResponse(error.body(), status_code=500)
    return HTMLResponse("<h1>Internal error</h1>", status_code=500)


class AccessLog:
    """One log line per request: client, method, path, status, duration and stack."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            client = scope.get("client") or ("-", 0)
            stack = (scope.get("state") or {}).get("agent_class", "-")
            # The raw path, still percent-encoded: a decoded one could carry a newline and
            # forge a log line of its own.
            path = bytes(scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
            access_log.info(
                "%s %s %s %d %.1f ms %s", client[0], scope["method"], path,
                status, (time.perf_counter() - started) * 1000, stack,
            )
