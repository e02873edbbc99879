"""Continuity tests never read the person's own Claude Code files."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest


@pytest.fixture
def ticking_clock() -> Callable[[], datetime]:
    """A clock that moves a second on each reading: every learning stored a moment after the
    last, so session order is the order of storing."""
    now = [datetime(2026, 11, 1, tzinfo=UTC)]

    def clock() -> datetime:
        now[0] += timedelta(seconds=1)
        return now[0]

    return clock


@pytest.fixture(autouse=True)
def own_claude_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``CLAUDE_CONFIG_DIR`` (where user-level skill rules live) at an empty folder."""
    folder = tmp_path_factory.mktemp("claude-config")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder
