"""Fixtures for Reasoning tests: turn inputs with a controllable context."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

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
