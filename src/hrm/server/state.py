"""What every route of one server process shares, and how a request finds who it acts for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hrm.server.auth import local_principal, resolve_bearer

if TYPE_CHECKING:
    from starlette.requests import Request

    from hrm.config import HRMConfig
    from hrm.home import HRMHome
    from hrm.server.auth import SessionSigner
    from hrm.server.bridge import StackPool
    from hrm.server.chat import ReplyCache
    from hrm.server.keys import KeyStore, Principal
    from hrm.server.settings import ServeSettings

__all__ = ["ServerState", "authenticate", "state_of"]


@dataclass(kw_only=True)
class ServerState:
    """One process's server: settings, home, keys, the open stacks."""

    settings: ServeSettings
    home: HRMHome
    config: HRMConfig
    keys: KeyStore
    pool: StackPool
    replies: ReplyCache
    signer: SessionSigner

    def local(self) -> Principal:
        """The principal of every request under ``--no-auth``."""
        return local_principal(self.config.default_agent_class)


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.hrm
    return state


def authenticate(request: Request) -> Principal:
    """The request's principal from its bearer key (any principal under ``--no-auth``).

    The stack is noted on the request for the access log line.
    """
    state = state_of(request)
    if state.settings.no_auth:
        principal = state.local()
    else:
        principal = resolve_bearer(state.keys, request.headers.get("authorization"))
    request.state.agent_class = principal.agent_class
    return principal
