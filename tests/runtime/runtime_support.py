"""Helpers for runtime tests: small registries, proposals and per-agent scripted models.

Imported by the test modules (pytest puts this directory on sys.path); the fixtures are
re-exported by conftest.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from hrm.reasoning.types import AgentBundleProposal, InputClassification
from hrm.runtime import AgentDefinition, AgentExecutionContext, AgentRegistry
from hrm.testing import ScriptedAdapter
from hrm.types import Complexity, ConflictLevel, ReducerType, Stakes


def agent(agent_id: str, **fields: Any) -> AgentDefinition:
    """A minimal agent definition."""
    fields.setdefault("role", f"{agent_id} role")
    fields.setdefault("system_prompt", f"You are {agent_id}.")
    return AgentDefinition(id=agent_id, **fields)


def registry(*ids: str, **by_id: AgentDefinition) -> AgentRegistry:
    """A registry of plain agents ``ids`` plus the given definitions."""
    return AgentRegistry([agent(i) for i in ids] + list(by_id.values()))


def classification() -> InputClassification:
    return InputClassification(
        complexity=Complexity.SIMPLE, uncertainty=0.5, conflict=ConflictLevel.NONE,
        stakes=Stakes.LOW, horizon="immediate", domain=[], confidence=0.5,
    )


def proposal(
    agents: list[str],
    reducer: ReducerType = ReducerType.MERGE,
    *,
    parallel: bool = True,
    **config: Any,
) -> AgentBundleProposal:
    return AgentBundleProposal(
        strategy="exploration", classification=classification(), agents=agents,
        reducer=reducer, parallel=parallel, reducer_config=dict(config),
    )


def context(task: str = "Check the figures", **fields: Any) -> AgentExecutionContext:
    return AgentExecutionContext(problem_id="prob_1", task=task, **fields)


class Models:
    """One ScriptedAdapter per agent id; `llm_for` hands them to the runtime."""

    def __init__(self) -> None:
        self.adapters: dict[str, ScriptedAdapter] = {}

    def script(self, agent_id: str, *replies: Any) -> ScriptedAdapter:
        adapter = ScriptedAdapter(replies, model=f"model-{agent_id}")
        self.adapters[agent_id] = adapter
        return adapter

    def llm_for(self, definition: AgentDefinition) -> ScriptedAdapter:
        if definition.id not in self.adapters:
            self.adapters[definition.id] = ScriptedAdapter(model=f"model-{definition.id}")
        return self.adapters[definition.id]

    def assert_done(self) -> None:
        for adapter in self.adapters.values():
            adapter.assert_done()


@pytest.fixture
def models() -> Models:
    return Models()


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """An event that blocked agents wait on; set at teardown so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()
