"""Continuity tests never read the person's own Claude Code files."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def own_claude_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``CLAUDE_CONFIG_DIR`` (where user-level skill rules live) at an empty folder."""
    folder = tmp_path_factory.mktemp("claude-config")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder
