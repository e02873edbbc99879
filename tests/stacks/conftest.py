"""Fixtures for stack tests: homes, configs and stacks on the offline model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from hrm.config import HRMConfig, load_config
from hrm.home import HRMHome, initialize


@pytest.fixture
def config(home: HRMHome) -> HRMConfig:
    """The home's configuration, on the offline model."""
    cfg = load_config(home).config
    return replace(cfg, llm=replace(cfg.llm, provider="offline"))


@pytest.fixture
def make_stack(home: HRMHome, config: HRMConfig) -> Iterator[Callable[..., Any]]:
    """Create stacks (torn down at the end of the test)."""
    from hrm.stacks.factory import create_stack

    made: list[Any] = []

    def make(agent_class: str, **overrides: Any) -> Any:
        initialize(home, agent_class=agent_class)
        stack = create_stack(agent_class, replace(config, **overrides), home)
        made.append(stack)
        return stack

    yield make
    for stack in made:
        stack.teardown()

