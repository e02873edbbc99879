"""How one `hrm serve` runs: address, home, limits, and whether keys are required.

The settings reach the app through one environment variable holding their JSON, since uvicorn
builds the app by importing its factory.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hrm.errors import HRMError

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_REGENERATE_WINDOW_S",
    "DEFAULT_STACK_WAIT_S",
    "ENV_BENCH",
    "ENV_SETTINGS",
    "ServeSettings",
    "is_loopback",
]

ENV_SETTINGS = "HRM_SERVE_SETTINGS"
"""The settings as JSON, for the app factory uvicorn imports (`hrm.server.app.app_from_env`)."""
ENV_BENCH = "HRM_SERVE_BENCH"
"""Set to 1 to mount the ungoverned pass-through endpoint that `bench/bench_serve.py` compares
against. Never set in normal serving: the pass-through skips every gate and ledger."""

DEFAULT_BODY_LIMIT = 1 << 20
"""A request body larger than this (1 MiB) is refused with 413 before it is read in full."""
DEFAULT_STACK_WAIT_S = 30.0
"""How long a request waits for another turn of the same stack before it is refused with 409."""
DEFAULT_REGENERATE_WINDOW_S = 120.0
"""A resent conversation (same prefix) within this many seconds of its turn is answered from
that turn instead of running a new one (D205)."""


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, kw_only=True)
class ServeSettings:
    """One server's settings; the CLI builds them from its options."""

    home: Path
    """The hrm home the server governs (resolved, absolute)."""
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    """Processes that run turns, each stack's always in the same one (1: this process)."""
    no_auth: bool = False
    """Serve without keys, as the ADMIN stack: allowed only on a loopback host."""
    body_limit: int = DEFAULT_BODY_LIMIT
    stack_wait_s: float = DEFAULT_STACK_WAIT_S
    regenerate_window_s: float = DEFAULT_REGENERATE_WINDOW_S
    turn_threads: int = 8
    """Threads that run turns: stacks beyond this many wait for a free thread."""
    max_open_stacks: int = 64
    """Stacks one process keeps open; the least recently used idle one is closed past it."""
    provider: str | None = None
    """The model provider for every stack (default: the home's configuration)."""
    model: str | None = None
    bench: bool = field(default=False)
    """Mount the ungoverned pass-through endpoint (`ENV_BENCH`); for the benchmark only."""

    def __post_init__(self) -> None:
        if self.no_auth and not is_loopback(self.host):
            raise HRMError.validation_failed(
                f"--no-auth serves without keys, so it is refused on {self.host}: use it only "
                "on a loopback address (127.0.0.1, ::1) or create keys with "
                "`hrm serve keys create --user NAME`",
                host=self.host,
            )
        if self.workers < 1:
            raise HRMError.validation_failed(f"--workers must be 1 or more, not {self.workers}")
        if self.body_limit < 1024:
            raise HRMError.validation_failed("the body limit must be at least 1024 bytes")
        if self.stack_wait_s < 0 or self.regenerate_window_s < 0:
            raise HRMError.validation_failed("waits and windows cannot be negative")

    def to_env(self) -> str:
        """The settings as the JSON `from_env` reads."""
        data = asdict(self)
        data["home"] = str(self.home)
        return json.dumps(data)

    @classmethod
    def from_env(cls) -> ServeSettings:
        """The settings a parent process put in `ENV_SETTINGS`.

        Raises:
            HRMError: ``VALIDATION_FAILED`` when the variable is missing or not settings.
        """
        raw = os.environ.get(ENV_SETTINGS)
        if not raw:
            raise HRMError.validation_failed(
                f"{ENV_SETTINGS} is not set: start the server with `hrm serve`"
            )
        try:
            data = json.loads(raw)
            data["home"] = Path(data["home"])
            return cls(**data)
        except (ValueError, KeyError, TypeError) as exc:
            raise HRMError.validation_failed(f"{ENV_SETTINGS} is not valid: {exc}") from exc
