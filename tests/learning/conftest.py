"""Fixtures for Learning tests: a database, a controllable clock, an episodic log."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hrm.storage.sqlite import Database


class Clock:
    """A clock that moves only when told (one second per call keeps ordering strict)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class EpisodicLog:
    """Keeps logged entries and returns ``ep_<n>`` ids, as MemoryBus.log_episode would."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def __call__(self, entry: dict[str, Any]) -> str:
        self.entries.append(entry)
        return f"ep_{len(self.entries)}"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    with Database(db_path) as database:
        yield database


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def episodic() -> EpisodicLog:
    return EpisodicLog()
