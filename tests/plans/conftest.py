"""Fixtures for plan-engine tests: plans built from tables, models that fail on cue."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hrm.altitude.types import Plan, PlanStep, PlanStepStatus
from hrm.errors import HRMError
from hrm.llm.offline import OfflineAdapter
from hrm.llm.types import LLMCallConfig, LLMResponse, Message

MakePlan = Callable[..., Plan]


def build_plan(*specs: tuple[int, str, list[int]] | tuple[int, str, list[int], str]) -> Plan:
    """A plan from ``(order, action_type, dependencies[, description])`` rows."""
    steps = []
    for spec in specs:
        order, action, deps = spec[0], spec[1], spec[2]
        description = spec[3] if len(spec) > 3 else f"Work item {order}"  # type: ignore[misc]
        steps.append(PlanStep(order=order, action_type=action, dependencies=list(deps),
                              description=description))
    for step in steps:
        step.total_steps = len(steps)
    return Plan(id="plan_test", steps=steps, estimated_turns=len(steps), requires_agents=False,
                agent_suggestion=None)


@pytest.fixture
def make_plan() -> MakePlan:
    """``make_plan((1, "research", []), (2, "execute", [1]))``."""
    return build_plan


def set_status(plan: Plan, **statuses: str) -> Plan:
    """Set step statuses by step id: ``set_status(plan, step_1="COMPLETE")``."""
    for step in plan.steps:
        if step.step_id in statuses:
            step.status = PlanStepStatus(statuses[step.step_id])
    return plan


class FlakyModel:
    """The offline model, except that calls whose user turn contains a marker fail.

    ``failures[marker]`` is how many calls with that marker fail before they succeed
    (``-1``: always). Every call's user text is kept in ``calls``.
    """

    def __init__(self, failures: dict[str, int] | None = None) -> None:
        self.inner = OfflineAdapter()
        self.failures = dict(failures or {})
        self.calls: list[str] = []
        self.lock = threading.Lock()

    @property
    def provider(self) -> str:
        return "offline"

    @property
    def model(self) -> str:
        return "flaky-offline"

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        text = messages[-1].content if messages else ""
        with self.lock:
            self.calls.append(text)
            for marker, left in self.failures.items():
                if marker in text and left != 0:
                    self.failures[marker] = left - 1 if left > 0 else -1
                    raise HRMError.provider_error(503, f"scripted failure on {marker!r}")
        return self.inner.chat(messages, system, config)

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise AssertionError("not used")


class ScriptedModel:
    """A 'real' model (provider ``scripted``) answering by purpose from a script.

    ``answers[purpose]`` is a list of texts returned in turn for calls with that purpose; a
    purpose with no script left fails the test. Step calls (``plan_step:*``) get a fixed text.
    """

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers = {k: list(v) for k, v in (answers or {}).items()}
        self.purposes: list[str] = []
        self.lock = threading.Lock()

    @property
    def provider(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return "scripted-1"

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        purpose = (config.purpose if config else None) or "none"
        with self.lock:
            self.purposes.append(purpose)
            if purpose.startswith("plan_step:"):
                content = f"result of: {messages[-1].content.splitlines()[0]}"
            else:
                script = self.answers.get(purpose)
                if not script:
                    raise AssertionError(f"unexpected model call for {purpose!r}")
                content = script.pop(0)
        return LLMResponse(content=content, model="scripted-1", provider="scripted",
                           input_tokens=1, output_tokens=1, total_tokens=2, finish_reason="stop",
                           latency_ms=1)

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise AssertionError("not used")
