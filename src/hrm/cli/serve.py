"""`hrm serve`: a governed assistant behind an OpenAI-compatible API, and its keys.

``hrm serve [--host --port --home --workers --no-auth …]`` runs the server until SIGTERM or
Ctrl-C. ``hrm serve keys create|list|revoke`` manage the keys it accepts; they work without
the ``serve`` extra installed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hrm.cli._common import (
    HomeOption,
    JsonOption,
    ModelOption,
    ProviderOption,
    console,
    emit_json,
    err_console,
    handle_errors,
)
from hrm.cli._root import SuggestingGroup

if TYPE_CHECKING:
    from hrm.server.keys import KeyStore

__all__ = ["app"]

_SETTINGS = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    cls=SuggestingGroup,
    help="Serve a governed assistant over an OpenAI-compatible API, with a web view.",
    invoke_without_command=True,
    context_settings=_SETTINGS,
)
keys_app = typer.Typer(
    cls=SuggestingGroup,
    help="Create, list and revoke the API keys `hrm serve` accepts.",
    no_args_is_help=True,
    context_settings=_SETTINGS,
)
app.add_typer(keys_app, name="keys")


@app.callback()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on (0: any free port).", min=0,
                          max=65535)
    ] = 8000,
    home: HomeOption = None,
    workers: Annotated[
        int, typer.Option(
            "--workers", min=1, max=64,
            help="Processes that run turns, a key's always in the same one (1: the server's).",
        )
    ] = 1,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="Serve without keys, as ADMIN (loopback addresses only)."),
    ] = False,
    provider: ProviderOption = None,
    model: ModelOption = None,
    stack_wait: Annotated[
        float,
        typer.Option("--stack-wait", help="Seconds a request waits for its stack's last turn "
                     "before 409.", min=0.0),
    ] = 30.0,
    regenerate_window: Annotated[
        float,
        typer.Option("--regenerate-window", help="Seconds within which a resent conversation "
                     "is answered from its turn (0: never).", min=0.0),
    ] = 120.0,
    body_limit: Annotated[
        int, typer.Option("--body-limit", help="Largest request body in bytes (413 above).",
                          min=1024)
    ] = 1 << 20,
    turn_threads: Annotated[
        int, typer.Option("--turn-threads", help="Turns one process runs at once (others wait).",
                          min=1, max=256)
    ] = 8,
) -> None:
    """Serve the home's stacks: POST /v1/chat/completions, /v1/hrm/… and the web view at /."""
    if ctx.invoked_subcommand is not None:
        return
    with handle_errors():
        from hrm.home import HRMHome
        from hrm.server.settings import ENV_BENCH, ServeSettings

        settings = ServeSettings(
            home=HRMHome.resolve(home).root.resolve(), host=host, port=port, workers=workers,
            no_auth=no_auth, provider=provider, model=model, stack_wait_s=stack_wait,
            regenerate_window_s=regenerate_window, body_limit=body_limit, turn_threads=turn_threads,
            bench=os.environ.get(ENV_BENCH, "") not in ("", "0"),
        )
        from hrm.server.runner import serve as run

        try:
            run(settings)
        except KeyboardInterrupt:
            err_console.print("hrm serve: stopped")


@keys_app.command("create")
def create(
    user: Annotated[str, typer.Option("--user", help="Whose key: their stack is RESIDENT:<user>.")],
    admin: Annotated[
        bool, typer.Option("--admin", help="An admin key: it acts as the ADMIN stack.")
    ] = False,
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Make a key and print it once: it is stored only as a salted hash."""
    with handle_errors():
        store = _store(home)
        created = store.create(user, admin=admin)
    entry = created.entry
    if json_out:
        emit_json({**entry.listed(), "key": created.token})
        return
    console.print(f"Key {entry.id} for {entry.user} ({entry.agent_class}). Shown once, keep it:")
    console.print(created.token)


@keys_app.command("list")
def list_keys(home: HomeOption = None, json_out: JsonOption = False) -> None:
    """Every key with its user, stack and state (never the key itself)."""
    from hrm.cli._table import print_table

    with handle_errors():
        keys = _store(home).list()
    rows = [k.listed() for k in keys]
    if json_out:
        emit_json(rows)
        return
    print_table(
        ["id", "user", "stack", "created", "revoked"],
        [(r["id"], r["user"], r["agent_class"], r["created_at"], r["revoked_at"] or "")
         for r in rows],
    )


@keys_app.command("revoke")
def revoke(
    key: Annotated[str, typer.Argument(help="A key id, or a user name (all their keys).")],
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Revoke a key (or a user's keys): servers refuse it from their next request."""
    with handle_errors():
        revoked = _store(home).revoke(key)
    if json_out:
        emit_json([k.listed() for k in revoked])
        return
    for entry in revoked:
        console.print(f"Revoked {entry.id} ({entry.user}, {entry.agent_class})")


def _store(home: Path | None) -> KeyStore:
    from hrm.home import HRMHome, initialize
    from hrm.server.keys import KeyStore

    resolved = HRMHome.resolve(home)
    initialize(resolved)
    return KeyStore(resolved)
