"""Starting `hrm serve`: bind, say what is served and how it is protected, run uvicorn.

Before anything listens, the home is created (owner-only, as every home hrm makes) and the
model provider is checked: a server that cannot answer any turn refuses to start, naming the
setting, instead of answering every request with an error that blames the client. The socket
is bound here, before uvicorn starts, so ``--port 0`` can be announced with the port it got.
One process serves HTTP; with ``--workers N`` it hands turns to N worker processes of its own
(`hrm.server.turn_workers`, D401). Uvicorn's own graceful shutdown does the rest: on SIGTERM
it stops accepting, lets every request in flight finish (streams included), then the app's
lifespan waits for turns whose clients went away (D210).
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import sys
from typing import Any

from hrm.errors import HRMError
from hrm.server.settings import ENV_SETTINGS, ServeSettings

__all__ = ["announce", "bind", "check_provider", "configure_logging", "serve"]

_ACCESS = "hrm.server.access"


def configure_logging() -> None:
    """One line per request on stderr (``hrm.server.access``); library warnings as before."""
    access = logging.getLogger(_ACCESS)
    if any(getattr(h, "_hrm_serve", False) for h in access.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%dT%H:%M:%S"))
    handler._hrm_serve = True  # type: ignore[attr-defined]
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (port 0: any free port).

    Raises:
        HRMError: ``VALIDATION_FAILED`` when the address cannot be listened on, naming the
            port or host and why: ``--port`` or ``--host`` is the value to change (exit 3).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
    # protocol says TCP, and with Nagle on, every answer on a kept-alive connection waited
    # ~40 ms for the client's delayed ACK between its headers and its body.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HRMError.validation_failed(
            f"Cannot listen on {host}:{port}: {_why_not(exc, host, port)}",
            host=host, port=port,
        ) from exc
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _why_not(exc: OSError, host: str, port: int) -> str:
    """Why an address cannot be bound, and which option to change."""
    if exc.errno == errno.EADDRINUSE:
        return (f"port {port} is already in use by another program; choose another --port "
                "(0 picks a free one)")
    if exc.errno == errno.EACCES:
        return (f"port {port} needs privileges this user does not have (ports below 1024); "
                "choose a --port from 1024 up")
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this machine; check --host"
    return f"{exc.strerror or exc}; check --host and --port"


def check_provider(settings: ServeSettings) -> None:
    """Refuse to serve with a model provider no turn could use.

    Raises:
        HRMError: ``VALIDATION_FAILED`` naming ``--provider`` or the configuration key (and
            where it was set) when hrm knows no provider by that name.
    """
    from hrm.config import load_config
    from hrm.home import HRMHome
    from hrm.llm.factory import LLMAdapterFactory

    if settings.provider is not None:
        name, where = settings.provider, "--provider"
    else:
        configured = load_config(HRMHome(settings.home)).values["llm.provider"]
        name, where = str(configured.value), f"llm.provider (from {configured.origin})"
    try:
        LLMAdapterFactory.resolve_provider(name)
    except HRMError as exc:
        raise HRMError.validation_failed(
            f"{where} is {name!r}, which no turn could use: {exc.message}. `hrm serve` did not "
            "start; `hrm models list` shows the providers installed here",
            provider=name,
        ) from exc


def announce(settings: ServeSettings, port: int, active_keys: int) -> str:
    """The one line `hrm serve` prints when it is ready: where, which home, which protection."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    if settings.no_auth:
        auth = "NO AUTH (--no-auth: anyone on this machine acts as ADMIN)"
    elif active_keys:
        auth = f"keys ({active_keys} active)"
    else:
        auth = "keys (none yet: `hrm serve keys create --user NAME`; every request gets 401)"
    workers = (
        f", turns in {settings.workers} worker processes" if settings.workers > 1 else ""
    )
    bench = ", BENCH MODE (ungoverned /v1/bench/passthrough mounted)" if settings.bench else ""
    return (
        f"hrm serve: http://{host}:{port}/ (API at /v1) · home {settings.home} · auth: "
        f"{auth}{workers}{bench}"
    )


def serve(settings: ServeSettings) -> None:
    """Serve until SIGTERM or Ctrl-C; returns when every turn in flight has been recorded.

    Raises:
        HRMError: When the home cannot be created, the provider is unknown, or the port
            cannot be bound.
    """
    import uvicorn

    from hrm.home import HRMHome, initialize
    from hrm.server.keys import KeyStore

    configure_logging()
    # First: a home hrm creates is created owner-only, before anything puts a file in it.
    initialize(HRMHome(settings.home))
    check_provider(settings)
    sock = bind(settings.host, settings.port)
    settings = _with_port(settings, sock.getsockname()[1])
    os.environ[ENV_SETTINGS] = settings.to_env()
    config = uvicorn.Config(
        "hrm.server.app:app_from_env", factory=True,
        log_level="warning", access_log=False, lifespan="on",
        timeout_graceful_shutdown=None, server_header=False,
    )
    keys = KeyStore(HRMHome(settings.home)).count_active()
    sys.stderr.write(announce(settings, settings.port, keys) + "\n")
    sys.stderr.flush()
    # Uvicorn re-raises SIGTERM once its graceful shutdown is done, to die of it; a stop that
    # let every turn finish is a success, so the re-raised signal lands here and is noted.
    stops: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda sig, _frame: stops.append(sig))
    try:
        _server_class()(config).run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    sys.stderr.write("hrm serve: stopped; every turn in flight was recorded\n")


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """Uvicorn's server, saying when a stop begins and how many requests it waits for."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                sys.stderr.write(
                    f"hrm serve: stopping (signal {sig}): finishing "
                    f"{len(self.server_state.tasks)} request(s) in flight\n"
                )
                sys.stderr.flush()
            super().handle_exit(sig, frame)

    return Server


def _with_port(settings: ServeSettings, port: int) -> ServeSettings:
    from dataclasses import replace

    return replace(settings, port=port)
