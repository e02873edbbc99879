"""``/v1/hrm/…``: the decisions a key's stack made, as ``hrm … --json`` prints them.

============================================  ==============================================
``GET  /v1/hrm/turns?limit=N``                recent turns (``/history`` in `hrm chat`)
``GET  /v1/hrm/turns/{n|last}``               one turn's why (`hrm why N --json`)
``GET  /v1/hrm/problems?all=true``            `hrm problems list --json`
``POST /v1/hrm/problems/{id}/resolve``        `hrm problems resolve ID --json`
``GET  /v1/hrm/canon``                        `hrm memory shared list --json`
``GET  /v1/hrm/canon/{key}``                  its versions and citation (`… history`, `… cite`)
``POST /v1/hrm/canon/{key}/rollback``         body ``{"version": N}``: `… rollback KEY N --json`
``GET  /v1/hrm/working``                      `hrm memory working list --json`
``GET  /v1/hrm/learnings?q=TEXT&limit=N``     `hrm memory search TEXT --json` (admin keys)
``GET  /v1/hrm/ledger/verify``                `hrm ledger verify --json` over the key's ledgers
============================================  ==============================================

Every route acts on the key's own stack; ``?stack=`` names another, which 004 §7 refuses
(403, recorded in the governance ledger) for every key — the point is to make the attempt
visible, not to offer a way round it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hrm.server import stack_data
from hrm.server.api_errors import APIError
from hrm.server.auth import require_visible
from hrm.server.chat_request import read_json_body
from hrm.server.json_response import JSONResponse
from hrm.server.keys import Principal
from hrm.server.state import ServerState, authenticate, state_of
from hrm.stacks.visibility import record_denial

__all__ = ["routes", "target_stack"]

_MAX_LIMIT = 200


def routes() -> list[Route]:
    """The decisions API's routes."""
    return [
        Route("/v1/hrm/turns", turns, methods=["GET"]),
        Route("/v1/hrm/turns/{turn}", turn, methods=["GET"]),
        Route("/v1/hrm/problems", problems, methods=["GET"]),
        Route("/v1/hrm/problems/{problem_id}/resolve", resolve, methods=["POST"]),
        Route("/v1/hrm/canon", _whole_stack(stack_data.canon, "canon"), methods=["GET"]),
        Route("/v1/hrm/canon/{key}", canon_entry, methods=["GET"]),
        Route("/v1/hrm/canon/{key}/rollback", rollback, methods=["POST"]),
        Route("/v1/hrm/working", _whole_stack(stack_data.working_sets, "working"),
              methods=["GET"]),
        Route("/v1/hrm/learnings", learnings, methods=["GET"]),
        Route("/v1/hrm/ledger/verify", verify, methods=["GET"]),
    ]


def target_stack(request: Request, principal: Principal, *, operation: str) -> str:
    """The stack a request is about (``?stack=``, default the key's own), once allowed."""
    target = request.query_params.get("stack") or principal.agent_class
    require_visible(state_of(request).home, principal, target, operation=operation)
    return target


def _limit(request: Request, default: int) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= _MAX_LIMIT:
        raise APIError(
            400, f"'limit' must be a whole number from 1 to {_MAX_LIMIT} (got {raw!r})",
            param="limit", code="invalid_value",
        )
    return int(raw)


def _whole_stack(read: Any, operation: str) -> Any:
    """A route answering `read(home, stack)` for the request's stack."""

    async def route(request: Request) -> Response:
        principal = authenticate(request)
        stack = target_stack(request, principal, operation=operation)
        return JSONResponse(await _read(read, state_of(request).home, stack))

    route.__name__ = operation
    return route


async def _read(fn: Any, *args: Any, **kwargs: Any) -> Any:
    # Reads need no stack slot (they take no lock a turn holds) but never run on the loop.
    return await asyncio.to_thread(fn, *args, **kwargs)


async def turns(request: Request) -> Response:
    principal = authenticate(request)
    stack = target_stack(request, principal, operation="turns")
    state = state_of(request)
    data = await _read(stack_data.recent_turns, state.home, stack, _limit(request, 20))
    return JSONResponse({"agent_class": stack, "turns": data})


async def turn(request: Request) -> Response:
    principal = authenticate(request)
    stack = target_stack(request, principal, operation="why")
    raw = request.path_params["turn"]
    if raw != "last" and not (raw.isdigit() and int(raw) >= 1):
        raise APIError(
            400, f"A turn is a number from 1, or 'last' (got {raw!r})", param="turn",
            code="invalid_value",
        )
    number = None if raw == "last" else int(raw)
    return JSONResponse(await _read(stack_data.turn_why, state_of(request).home, stack, number))


async def problems(request: Request) -> Response:
    principal = authenticate(request)
    stack = target_stack(request, principal, operation="problems")
    every = request.query_params.get("all", "").lower() in ("1", "true", "yes")
    data = await _read(
        stack_data.list_problems, state_of(request).home, stack, include_resolved=every
    )
    return JSONResponse(data)


async def resolve(request: Request) -> Response:
    principal = authenticate(request)
    stack = target_stack(request, principal, operation="resolve")
    problem_id = request.path_params["problem_id"]
    data = await state_of(request).pool.run(
        stack, lambda hrm: stack_data.resolve_problem(hrm, problem_id)
    )
    return JSONResponse(data)


async def canon_entry(request: Request) -> Response:
    principal = authenticate(request)
    stack = target_stack(request, principal, operation="canon")
    key = request.path_params["key"]
    return JSONResponse(await _read(stack_data.canon_entry, state_of(request).home, stack, key))


async def rollback(request: Request) -> Response:
    principal = authenticate(request)
    stack = target_stack(request, principal, operation="rollback")
    state = state_of(request)
    version = (await read_json_body(request, limit=state.settings.body_limit)).get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise APIError(
            400, f"'version' must be a version number from 1 (got {version!r})",
            param="version", code="invalid_value",
        )
    key = request.path_params["key"]
    data = await rollback_in(state, stack, key, version, principal)
    return JSONResponse(data)


async def rollback_in(
    state: ServerState, stack: str, key: str, version: int, principal: Principal
) -> dict[str, Any]:
    """Roll `key` of `stack` back to `version`, in the stack's order (API and web view)."""
    source = f"serve:{principal.user}"
    result: dict[str, Any] = await state.pool.run(
        stack, lambda hrm: stack_data.rollback_canon(hrm, key, version, source=source)
    )
    return result


async def learnings(request: Request) -> Response:
    principal = authenticate(request)
    state = state_of(request)
    if not principal.admin:
        # Learnings are the home's (003), not a stack's: only the home's admin reads them.
        record_denial(
            state.home, observer=principal.agent_class, target="learnings",
            reason="learnings belong to the home, which only an admin key reads",
            operation="serve:learnings",
        )
        raise APIError(
            403, f"Key {principal.key_id} ({principal.agent_class}) may not search learnings: "
            "they belong to the home, which only an admin key reads. The refusal is recorded",
            type="permission_error", code="visibility_denied",
        )
    text = request.query_params.get("q", "").strip()
    if not text:
        raise APIError(400, "'q' must say what to search for", param="q", code="invalid_value")
    data = await _read(stack_data.search_learnings, state.home, text, limit=_limit(request, 10))
    return JSONResponse(data)


async def verify(request: Request) -> Response:
    principal = authenticate(request)
    state = state_of(request)
    paths = stack_data.ledgers_of(state.home, principal)
    return JSONResponse(await _read(stack_data.verify_ledgers, state.home, paths))
