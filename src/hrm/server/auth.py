"""Who a request acts for: a bearer key for the API, a signed cookie for the web view.

A key maps to exactly one stack (D202). A request without a valid key is refused with 401
before anything else happens, and nothing is written for it. A key asking for another stack's
state is refused with 403 by 004 §7's visibility rule, and that denial is recorded in the
governance ledger (the one write a refused request makes: the audit of the refusal).

The web view signs the browser in with a key once and then carries a cookie holding only the
key's id, an expiry and a nonce, signed with HMAC-SHA256 under a secret kept in the home
(0600), so every server on the home accepts it and a revoked key ends its sessions at the next
request. Signing out ends the session the same way: its nonce goes on the home's list of
signed-out sessions (`hrm.server.revoked_sessions`), which every server checks, so the old
cookie is refused everywhere, after a restart too. Forms carry a CSRF token derived from the
session's nonce (D209).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass

from hrm._atomic import atomic_write
from hrm.home import HRMHome
from hrm.server.api_errors import APIError
from hrm.server.keys import KeyStore, Principal, server_dir
from hrm.server.revoked_sessions import RevokedSessions
from hrm.stacks.visibility import record_denial, visibility_decision

__all__ = [
    "SESSION_COOKIE",
    "SessionSigner",
    "WebSession",
    "bearer_token",
    "local_principal",
    "require_visible",
    "resolve_bearer",
]

SESSION_COOKIE = "hrm_session"
SESSION_TTL_S = 12 * 3600
"""A browser stays signed in this long (12 hours), unless its key is revoked first."""


def local_principal(agent_class: str) -> Principal:
    """Who every request is with ``--no-auth``: the person at this machine, as `agent_class`."""
    return Principal(user="local", agent_class=agent_class, admin=True, key_id="-")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer …`` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def resolve_bearer(keys: KeyStore, authorization: str | None) -> Principal:
    """The principal of a request's bearer key; 401 for a missing, unknown or revoked key."""
    token = bearer_token(authorization)
    if token is None:
        raise APIError(
            401,
            "No API key: send 'Authorization: Bearer sk-hrm-…' (`hrm serve keys create --user "
            "NAME` makes one)",
            type="authentication_error", code="missing_api_key",
        )
    principal = keys.verify(token)
    if principal is None:
        raise APIError(
            401, "The API key is not valid: it is unknown, revoked or mistyped",
            type="authentication_error", code="invalid_api_key",
        )
    return principal


def require_visible(home: HRMHome, principal: Principal, target: str, *, operation: str) -> None:
    """Refuse (403, recorded in the governance ledger) unless `principal` may see `target`."""
    decision = visibility_decision(principal.agent_class, target)
    if decision.allowed:
        return
    record_denial(
        home, observer=principal.agent_class, target=target, reason=decision.reason,
        operation=f"serve:{operation}",
    )
    raise APIError(
        403,
        f"Key {principal.key_id} ({principal.agent_class}) may not read or change stack "
        f"{target}: {decision.reason}. The refusal is recorded in the governance ledger",
        type="permission_error", code="visibility_denied", param="stack",
    )


@dataclass(frozen=True, kw_only=True)
class WebSession:
    """A signed-in browser: the key it signed in with and its CSRF token."""

    key_id: str
    csrf: str
    nonce: str
    """What makes this session itself: signing out revokes it."""
    expires: int
    """When the cookie stops being valid (seconds since the epoch)."""


class SessionSigner:
    """Signs and checks the web view's session cookies and CSRF tokens.

    The secret is created once per home (``server/session.key``, 0600) and shared by every
    server on that home, as is the list of signed-out sessions.
    """

    def __init__(self, home: HRMHome) -> None:
        self._revoked = RevokedSessions(server_dir(home) / "sessions-revoked.json")
        path = server_dir(home) / "session.key"
        if not path.exists():
            # Written aside, then linked into place: link(2) fails if another process won the
            # race, and a reader never sees a half-written secret.
            staged = path.with_name(f".session.key.{os.getpid()}.{secrets.token_hex(4)}")
            atomic_write(staged, secrets.token_hex(32))
            try:
                os.link(staged, path)
            except FileExistsError:
                pass
            finally:
                staged.unlink()
        secret = path.read_text(encoding="ascii").strip()
        self._secret = bytes.fromhex(secret)

    def _sign(self, text: str) -> str:
        return hmac.new(self._secret, text.encode("ascii"), hashlib.sha256).hexdigest()

    def issue(self, key_id: str, *, now: float | None = None) -> str:
        """A cookie value for a browser that signed in with key `key_id`."""
        expires = int((now if now is not None else time.time()) + SESSION_TTL_S)
        body = f"{key_id}.{expires}.{secrets.token_hex(16)}"
        return f"{body}.{self._sign(body)}"

    def read(self, cookie: str | None, *, now: float | None = None) -> WebSession | None:
        """The session a cookie carries, or None if it is missing, forged, expired or signed
        out."""
        if not cookie or not cookie.isascii():
            return None
        body, _, signature = cookie.rpartition(".")
        parts = body.split(".")
        if len(parts) != 3 or not hmac.compare_digest(self._sign(body), signature):
            return None
        key_id, expires, nonce = parts
        if not expires.isdigit() or int(expires) < (now if now is not None else time.time()):
            return None
        if self._revoked.is_revoked(nonce):
            return None
        return WebSession(
            key_id=key_id, csrf=self._sign(f"csrf.{nonce}"), nonce=nonce, expires=int(expires)
        )

    def revoke(self, session: WebSession) -> None:
        """Sign `session` out on every server of the home: its cookie is refused from now on.
        Blocking (a file lock and a write): call it off the event loop."""
        self._revoked.revoke(session.nonce, session.expires)
