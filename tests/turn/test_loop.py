"""The turn loop as data: its order is written once, and a step that answers ends the turn."""

from __future__ import annotations

from typing import Any

import pytest

from hrm.errors import HRMError
from hrm.turn.context import Outcome, TurnContext
from hrm.turn.loop import STEPS, run_steps


def test_the_steps_have_unique_names_and_answer_is_last() -> None:
    names = [name for name, _ in STEPS]
    assert len(names) == len(set(names))
    assert names[-1] == "answer"
    # Commands are read out of the message before arbitration weighs the rest; what they ask
    # for is written after it placed the turn; hrm's own answers come before the model's.
    order = {name: i for i, name in enumerate(names)}
    assert order["forget"] < order["problems"] < order["statements"] < order["arbitrate"]
    assert order["arbitrate"] < order["memory"] < order["hrm_answers"] < order["execute"]


def test_the_first_step_that_answers_ends_the_turn() -> None:
    ran: list[str] = []

    def step(name: str, outcome: Outcome | None) -> tuple[str, Any]:
        def run(ctx: TurnContext) -> Outcome | None:
            ran.append(name)
            return outcome

        return name, run

    steps = (step("a", None), step("b", Outcome("hi", "remember")), step("c", None))
    outcome = run_steps(None, steps)  # type: ignore[arg-type]
    assert outcome == Outcome("hi", "remember") and ran == ["a", "b"]


def test_steps_that_never_answer_are_an_internal_error() -> None:
    with pytest.raises(HRMError, match="without an answer"):
        run_steps(None, (("a", lambda ctx: None),))  # type: ignore[arg-type]
