"""Fixtures of the server tests: a live `hrm serve` with keys, and a scripted upstream."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.server.support import ServerProcess, Upstream, create_key


@dataclass(frozen=True)
class Served:
    """A running server over its own home, with a key for two users and an admin."""

    server: ServerProcess
    home: Path
    alice: str
    bob: str
    admin: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One offline server per test module (starting one is the slow part)."""
    home = tmp_path_factory.mktemp("served") / "home"
    home.mkdir()
    keys = {user: create_key(home, user, admin=user == "root") for user in ("alice", "bob", "root")}
    with ServerProcess(home) as server:
        yield Served(server, home, keys["alice"], keys["bob"], keys["root"])
        assert server.stop() == 0


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    """A scripted OpenAI-compatible model on loopback."""
    yield from Upstream().serve()


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    """Threads for requests a test sends while it does something else."""
    with ThreadPoolExecutor(max_workers=4) as executor:
        yield executor
