"""Fixtures for Altitude tests: turn inputs with a controllable context, a scripted model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from hrm.errors import HRMError
from hrm.llm.types import LLMCallConfig, LLMResponse, Message
from hrm.types import AltitudeLevel, HRMContext, Stance, TurnInput

MakeInput = Callable[..., TurnInput]


@pytest.fixture
def make_input() -> MakeInput:
    """Build a `TurnInput` for text, with the stance and priority a test needs."""

    def build(text: str, *, stance: Stance = Stance.SENSEMAKING, priority: int = 0) -> TurnInput:
        context = HRMContext(
            session_id="s1",
            turn_number=1,
            problem_id=None,
            altitude=AltitudeLevel.L2_OPERATIONS,
            stance=stance,
            commitment_id=None,
            commitment_turns_remaining=None,
        )
        return TurnInput(
            text=text, timestamp=datetime(2026, 1, 1, tzinfo=UTC), context=context, priority=priority
        )

    return build


class ScriptedModel:
    """Answers each chat call with the next scripted text (or raises it) and records calls."""

    def __init__(self, *answers: str | HRMError, provider: str = "scripted") -> None:
        self._answers: Iterator[str | HRMError] = iter(answers)
        self._provider = provider
        self.calls: list[tuple[list[Message], str, LLMCallConfig | None]] = []

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model(self) -> str:
        return "scripted-1"

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        self.calls.append((messages, system, config))
        answer = next(self._answers)
        if isinstance(answer, HRMError):
            raise answer
        return LLMResponse(
            content=answer, model="scripted-1", provider=self._provider, input_tokens=1,
            output_tokens=1, total_tokens=2, finish_reason="stop", latency_ms=1,
        )

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not used")

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def scripted_model() -> type[ScriptedModel]:
    """The scripted adapter class: ``scripted_model('{"level": "L3"}', provider="x")``."""
    return ScriptedModel
