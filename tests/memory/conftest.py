"""Fixtures of the memory tests: a throwaway home, its database, and a clock tests move."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from hrm.home import HRMHome
from hrm.storage.sqlite import Database


@dataclass
class FakeClock:
    """A clock that stands still until a test advances it."""

    now: datetime = field(default_factory=lambda: datetime(2026, 11, 22, 10, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db(home: HRMHome) -> Iterator[Database]:
    database = Database(home.memory_db)
    yield database
    database.close()
