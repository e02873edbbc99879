"""Fixtures for the model layer: a scripted adapter, a fake clock and a recording ledger."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from hrm.errors import HRMError
from hrm.llm.types import LLMCallConfig, LLMResponse, Message, StreamChunk, estimate_tokens

Step = LLMResponse | HRMError | Exception | str


@dataclass
class ScriptedAdapter:
    """Answers with the next scripted step: a response, a string, or an error to raise."""

    steps: list[Step] = field(default_factory=list)
    provider_name: str = "scripted"
    calls: list[tuple[list[Message], str, LLMCallConfig | None]] = field(default_factory=list)

    @property
    def provider(self) -> str:
        return self.provider_name

    @property
    def model(self) -> str:
        return "scripted-1"

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def _next(self) -> LLMResponse:
        step = self.steps.pop(0) if self.steps else "ok"
        if isinstance(step, Exception):
            raise step
        if isinstance(step, str):
            return LLMResponse(
                content=step,
                model="scripted-1",
                provider=self.provider_name,
                input_tokens=10,
                output_tokens=5,
                total_tokens=15,
                finish_reason="stop",
                latency_ms=1,
            )
        return step

    def chat(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> LLMResponse:
        self.calls.append((messages, system, config))
        return self._next()

    def stream(
        self, messages: list[Message], system: str, config: LLMCallConfig | None = None
    ) -> Iterator[StreamChunk]:
        self.calls.append((messages, system, config))
        response = self._next()
        accumulated = ""
        for word in response.content.split(" "):
            piece = word if not accumulated else " " + word
            accumulated += piece
            yield StreamChunk(delta=piece, accumulated=accumulated, done=False)
        yield StreamChunk(
            delta="",
            accumulated=accumulated,
            done=True,
            finish_reason="stop",
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
        )


class FakeClock:
    """Monotonic seconds that only move when `sleep` is called."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Ledger:
    """Collects records the way the stack's execution ledger would."""

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self.records.append((kind, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [data for k, data in self.records if k == kind]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
def scripted() -> ScriptedAdapter:
    return ScriptedAdapter()
