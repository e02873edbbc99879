"""The web view at ``/``: a person reads their stack's decisions in a browser.

Server-rendered pages (Jinja2, autoescaped: model output and stored text are data, never
markup), a stylesheet and no script. A browser signs in with a key once; the cookie is
HttpOnly and SameSite=Strict and every form carries a CSRF token (D209). Signing out ends the
session on every server of the home. With ``--no-auth`` there is no key to sign in with: a
page opens as ADMIN and gives the browser a session of its own, so that forms still carry a
CSRF token and a form posted from another site is still refused. Each page reads the same data
as the decisions API (`stack_data`), and the decision page explains a turn with the sentences
`hrm why` prints (`hrm.cli.why.explain`), so the three never disagree; records are put into
words for a person by `page_text`.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from typing import Any
from urllib.parse import parse_qsl, quote

import jinja2
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from hrm.cli.why import explain
from hrm.errors import HRMError
from hrm.server import page_text, stack_data
from hrm.server.api_errors import APIError, from_hrm_error
from hrm.server.auth import SESSION_COOKIE, SESSION_TTL_S, WebSession
from hrm.server.chat_request import ChatRequest, read_body
from hrm.server.decisions_api import rollback_in
from hrm.server.extension import arbitration_band
from hrm.server.keys import Principal
from hrm.server.state import ServerState, state_of

__all__ = ["error_page", "routes"]

_FORM_LIMIT = 64 * 1024
"""A form is a key, a message or a button: 64 KiB is far more than any of them needs."""
_FORM_TOO_LARGE = "form_too_large"

templates = Jinja2Templates(
    env=jinja2.Environment(
        loader=jinja2.PackageLoader("hrm.server", "templates"),
        autoescape=True,
        # A decision record of another age lacks parts: they show as empty, never fail.
        undefined=jinja2.ChainableUndefined,
    )
)
templates.env.filters.update(
    canon_value=page_text.canon_value, ledger_problem=page_text.ledger_problem,
    ledger_repair=page_text.ledger_repair,
)


def routes() -> list[Route]:
    """The web view's pages and forms."""
    return [
        Route("/", conversation, methods=["GET"]),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/chat", chat, methods=["POST"]),
        Route("/turns/{turn:int}", decision, methods=["GET"]),
        Route("/problems", problems, methods=["GET"]),
        Route("/problems/{problem_id}/resolve", resolve, methods=["POST"]),
        Route("/canon", canon, methods=["GET"]),
        Route("/canon/{key}/rollback", rollback, methods=["POST"]),
        Route("/ledger", ledger, methods=["GET"]),
    ]


# ── who is signed in ────────────────────────────────────────────────────────


class _SignIn(Exception):
    """No valid session: the page answers with a redirect to the sign-in form."""


def _session(request: Request) -> tuple[Principal, WebSession]:
    state = state_of(request)
    session = state.signer.read(request.cookies.get(SESSION_COOKIE))
    if state.settings.no_auth:
        principal = state.local()
        if session is None:
            session = _local_session(request, state, principal)
    else:
        found = state.keys.principal_of(session.key_id) if session is not None else None
        if found is None or session is None:
            raise _SignIn
        principal = found
    request.state.agent_class = principal.agent_class
    return principal, session


def _local_session(request: Request, state: ServerState, principal: Principal) -> WebSession:
    """A new session for a browser under ``--no-auth``: the page opens at once (there is no
    key to sign in with, and sending it to the sign-in page looped back here), and its cookie
    goes out with the page (`_pages`). Its CSRF token is what keeps a form posted from another
    site out: that post carries no cookie (SameSite=Strict), so it is checked against a fresh
    session it cannot know."""
    cookie = state.signer.issue(principal.key_id)
    session = state.signer.read(cookie)
    assert session is not None  # just issued and signed with this signer's own secret
    request.state.new_session = cookie
    return session


async def _form(request: Request, session: WebSession | None) -> dict[str, str]:
    """The form's fields; 403 unless it carries this session's CSRF token."""
    if not request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded"
    ):
        raise APIError(400, "Forms are sent as application/x-www-form-urlencoded")
    try:
        body = await read_body(
            request.stream(), declared_length=request.headers.get("content-length"),
            limit=_FORM_LIMIT,
        )
    except APIError as exc:
        if exc.status != 413:
            raise
        # read_body's words are for API clients ("send a shorter conversation"): a form's
        # are for the person who filled it in.
        raise APIError(
            413, f"This form is over {_FORM_LIMIT // 1024} KiB, more than a page sends at once: "
            "shorten what you typed and send it again", code=_FORM_TOO_LARGE,
        ) from None
    try:
        fields = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    except UnicodeDecodeError:
        raise APIError(400, "The form is not valid UTF-8") from None
    sent = fields.get("csrf", "").encode("utf-8")  # bytes: a str with non-ASCII would raise
    if session is not None and not hmac.compare_digest(sent, session.csrf.encode("ascii")):
        raise APIError(
            403, "The form's CSRF token does not match this session: reload the page and send "
            "it again", type="permission_error", code="csrf_failed",
        )
    return fields


def _page(
    request: Request, name: str, principal: Principal | None, session: WebSession | None,
    status: int = 200, **context: Any,
) -> Response:
    return templates.TemplateResponse(
        request, name,
        {"principal": principal, "csrf": session.csrf if session else "",
         "no_auth": state_of(request).settings.no_auth, **context},
        status_code=status,
    )


def _redirect(path: str) -> Response:
    return RedirectResponse(path, status_code=303)


def error_page(request: Request, error: APIError) -> Response:
    """An error as a page (the API answers JSON; a browser gets words)."""
    return _page(request, "error.html", None, None, status=error.status, error=error)


def _pages(handler: Any) -> Any:
    """A page handler: sign-in redirects and library errors become pages."""

    async def page(request: Request) -> Response:
        try:
            result: Response = await handler(request)
        except _SignIn:
            return _redirect("/login")
        except HRMError as exc:
            result = error_page(request, from_hrm_error(exc))
        except APIError as exc:
            result = error_page(request, exc)
        new_session = getattr(request.state, "new_session", None)
        if new_session is not None:
            _set_session_cookie(result, request, new_session)
        return result

    page.__name__ = handler.__name__
    page.__doc__ = handler.__doc__
    return page


# ── signing in and out ──────────────────────────────────────────────────────


async def login_page(request: Request) -> Response:
    if state_of(request).settings.no_auth:  # nothing to sign in with: the pages open as ADMIN
        return _redirect("/")
    return _page(request, "login.html", None, None, problem=None)


async def login(request: Request) -> Response:
    state = state_of(request)
    if state.settings.no_auth:  # no key to check: every page opens as ADMIN
        return _redirect("/")
    try:
        fields = await _form(request, None)
    except APIError as exc:
        return error_page(request, exc)
    principal = state.keys.verify(fields.get("key", "").strip())
    if principal is None:
        return _page(
            request, "login.html", None, None, status=401,
            problem="That key is not valid: it is unknown, revoked or mistyped.",
        )
    return _sign_in(request, state, principal.key_id)


def _sign_in(request: Request, state: ServerState, key_id: str) -> Response:
    response = _redirect("/")
    _set_session_cookie(response, request, state.signer.issue(key_id))
    return response


def _set_session_cookie(response: Response, request: Request, cookie: str) -> None:
    response.set_cookie(
        SESSION_COOKIE, cookie, max_age=SESSION_TTL_S, path="/",
        httponly=True, samesite="strict", secure=request.url.scheme == "https",
    )


@_pages
async def logout(request: Request) -> Response:
    """End the session for good: refused by every server of the home from now on, not only
    forgotten by this browser (a copied cookie would still work until it expired)."""
    _principal, session = _session(request)
    await _form(request, session)
    await asyncio.to_thread(state_of(request).signer.revoke, session)
    response = _redirect("/login")
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


# ── pages ───────────────────────────────────────────────────────────────────


@_pages
async def conversation(request: Request) -> Response:
    """The stack's recent turns, each answer linked to its decision, and a message box."""
    principal, session = _session(request)
    return await _conversation_page(request, principal, session)


async def _conversation_page(
    request: Request, principal: Principal, session: WebSession, *, status: int = 200,
    problem: str | None = None,
) -> Response:
    state = state_of(request)
    turns = await asyncio.to_thread(
        stack_data.recent_turns, state.home, principal.agent_class, 30
    )
    return _page(request, "conversation.html", principal, session, status=status, turns=turns,
                 problem=problem)


@_pages
async def chat(request: Request) -> Response:
    """Send a message: one governed turn, then back to the conversation at its answer."""
    principal, session = _session(request)
    state = state_of(request)
    try:
        fields = await _form(request, session)
    except APIError as exc:
        if exc.code != _FORM_TOO_LARGE:
            raise
        # Shown where it was typed, in words for the person who typed it.
        return await _conversation_page(
            request, principal, session, status=413, problem=(
                f"This message is over {_FORM_LIMIT // 1024} KiB, more than the page sends at "
                "once, so it was not sent: shorten it, or send it in parts."
            ),
        )
    text = fields.get("message", "")
    if not text.strip():
        return _redirect("/")
    # The page shows hrm's own history, so a message sent twice is meant twice: its key
    # never repeats, and nothing is replayed (D205 is for clients that resend history).
    chat_request = ChatRequest(
        model="hrm", text=text, conversation_hash=f"web-{secrets.token_hex(16)}", messages=1
    )
    outcome = await state.pool.turn(principal.agent_class, chat_request, replies=state.replies)
    return _redirect(f"/#turn-{outcome.extension.turn}")


@_pages
async def decision(request: Request) -> Response:
    """Why one answer is that answer: the turn's decision record, readable."""
    principal, session = _session(request)
    state = state_of(request)
    why = await asyncio.to_thread(
        stack_data.turn_why, state.home, principal.agent_class, request.path_params["turn"]
    )
    record = why["decision"]
    arbitration = record.get("arbitration") or {}
    score = arbitration.get("preempt_score")
    events = why.get("events") or []
    attention = record.get("attention_state") or {}
    return _page(
        request, "turn.html", principal, session, why=why, d=record,
        rows=explain(record, events),
        band=arbitration_band(score if isinstance(score, int | float) else None,
                              state.config.policy),
        policy=state.config.policy,
        gates=page_text.stance_and_gates(record, events),
        context_label=lambda item: page_text.context_label(item, attention),
    )


@_pages
async def problems(request: Request) -> Response:
    principal, session = _session(request)
    state = state_of(request)
    found = await asyncio.to_thread(
        stack_data.list_problems, state.home, principal.agent_class, include_resolved=True
    )
    return _page(request, "problems.html", principal, session, problems=found)


@_pages
async def resolve(request: Request) -> Response:
    principal, session = _session(request)
    await _form(request, session)
    problem_id = request.path_params["problem_id"]
    await state_of(request).pool.run(
        principal.agent_class, lambda hrm: stack_data.resolve_problem(hrm, problem_id)
    )
    return _redirect("/problems")


@_pages
async def canon(request: Request) -> Response:
    """Every canon entry with its versions, citation and a rollback button per old version."""
    principal, session = _session(request)
    state = state_of(request)

    def read() -> list[dict[str, Any]]:
        return [
            stack_data.canon_entry(state.home, principal.agent_class, ref["key"])
            for ref in stack_data.canon(state.home, principal.agent_class)
        ]

    entries = await asyncio.to_thread(read)
    return _page(request, "canon.html", principal, session, entries=entries, quote=quote)


@_pages
async def rollback(request: Request) -> Response:
    principal, session = _session(request)
    fields = await _form(request, session)
    version = fields.get("version", "")
    if not version.isdigit():
        raise APIError(400, f"'version' must be a version number (got {version!r})")
    key = request.path_params["key"]
    await rollback_in(state_of(request), principal.agent_class, key, int(version), principal)
    return _redirect(f"/canon#{quote(key, safe='')}")


@_pages
async def ledger(request: Request) -> Response:
    principal, session = _session(request)
    state = state_of(request)
    paths = stack_data.ledgers_of(state.home, principal)
    report = await asyncio.to_thread(stack_data.verify_ledgers, state.home, paths)
    return _page(request, "ledger.html", principal, session, report=report)
