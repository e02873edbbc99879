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


_SESSION_STARTED = os.times().elapsed
"""When this process began the session, on the clock /proc's start times count from (boot)."""


def _resident_processes_started_by_tests() -> list[int]:
    """Resident processes (D403) that a test of this run started and did not stop."""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        booted = float(Path("/proc/uptime").read_text().split()[0])
        pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
    except OSError:
        return []
    found = []
    now = os.times().elapsed
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"hrm.resident.server" not in command:
                continue
            environment = Path(f"/proc/{pid}/environ").read_bytes()
            started = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        except (OSError, IndexError, ValueError):
            continue
        age = booted - started / ticks
        if b"PYTEST_CURRENT_TEST=" in environment and age <= now - _SESSION_STARTED + 1:
            found.append(pid)
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A `hrm turn` subprocess run without ``HRM_RESIDENT=0`` leaves a resident process
    behind for half an hour: stop it, and fail the run so the test gets fixed."""
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller looks once every worker has finished
    leaked = _resident_processes_started_by_tests()
    for pid in leaked:
        try:
            os.kill(pid, 15)
        except OSError:
            continue
    if leaked:
        print(f"\nerror: tests left {len(leaked)} resident process(es) running (pids {leaked}); "
              "a test ran `hrm turn` with an environment lacking HRM_RESIDENT=0")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
