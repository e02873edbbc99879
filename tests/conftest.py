"""Shared fixtures: every test runs with a clean environment, a throwaway home and no network."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from hrm.home import HRMHome, initialize

# Hypothesis profiles. "ci", the default, fails a property only on a counterexample: no per-example
# deadline and no too-slow or too-much-data health check, because on a loaded 2-core machine an
# example runs several times slower than on a quiet one and the speed is not what a property
# states (a Hypothesis "too slow" check failed `make test` under load). "dev" is Hypothesis's own
# defaults (200 ms deadline, every health check), to notice a property that has become slow:
# HYPOTHESIS_PROFILE=dev make test.
settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("dev")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_PROVIDER_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LLM_PROVIDER",
    "LLM_MODEL",
    "CLAUDE_PROJECT_DIR",
)


@pytest.fixture(autouse=True)
def clean_environ(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Remove HRM_* and provider variables; point HRM_HOME at a fresh directory."""
    for var in list(os.environ):
        if var.startswith("HRM_") or var.startswith("LLM_") or var in _PROVIDER_VARS:
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HRM_HOME", str(tmp_path_factory.mktemp("hrm-home")))
    # The local model may be installed; tests use the deterministic offline one unless they ask.
    monkeypatch.setenv("HRM_PROVIDER", "offline")
    # A `hrm turn` subprocess would leave a resident process behind (D403); the tests of it
    # turn it on in a runtime directory of their own.
    monkeypatch.setenv("HRM_RESIDENT", "0")
    yield


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit tests never reach the network: only loopback and unix sockets may connect."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and host not in ("127.0.0.1", "::1", "localhost"):
            raise RuntimeError(f"tests must not reach the network (tried {address!r})")
        real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def home(tmp_path: Path) -> HRMHome:
    """An initialised, empty hrm home."""
    h = HRMHome(tmp_path / "home")
    initialize(h)
    return h
