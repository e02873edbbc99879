"""The turn loop as data: the ordered, named steps one input goes through.

Each step is ``step(ctx) -> Outcome | None`` (`hrm.turn.context`). `run_steps` calls them in
order until one returns an `Outcome`; the last step (``answer``) always does. The order is the
one place where what happens before what is decided: reading the commands out of a message
comes before arbitration weighs the rest, writing what they ask for comes after arbitration
placed the turn, and everything the model needs comes after hrm has answered what it answers
itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hrm.errors import HRMError
from hrm.turn.steps.altitude import altitude
from hrm.turn.steps.answer import answer
from hrm.turn.steps.arbitrate import arbitrate
from hrm.turn.steps.attend import attend
from hrm.turn.steps.commit import commit
from hrm.turn.steps.confirm import confirm
from hrm.turn.steps.correct import correct
from hrm.turn.steps.decisions import decisions
from hrm.turn.steps.execute import execute
from hrm.turn.steps.feedback import feedback
from hrm.turn.steps.forget import forget
from hrm.turn.steps.govern import govern
from hrm.turn.steps.hrm_answers import hrm_answers
from hrm.turn.steps.kept import kept
from hrm.turn.steps.learn import learn
from hrm.turn.steps.memory import memory
from hrm.turn.steps.moves import moves
from hrm.turn.steps.pending import pending
from hrm.turn.steps.problems import problems
from hrm.turn.steps.read import read_message
from hrm.turn.steps.reason import reason
from hrm.turn.steps.route import route
from hrm.turn.steps.signals import signals
from hrm.turn.steps.statements import statements
from hrm.turn.steps.topic import topic

if TYPE_CHECKING:
    from hrm.turn.context import Outcome, Step, TurnContext

__all__ = ["STEPS", "run_steps"]

STEPS: tuple[tuple[str, Step], ...] = (
    ("read", read_message),
    ("pending", pending),
    ("correct", correct),
    ("feedback", feedback),
    ("signals", signals),
    ("forget", forget),
    ("problems", problems),
    ("kept", kept),
    ("statements", statements),
    ("arbitrate", arbitrate),
    ("moves", moves),
    ("topic", topic),
    ("confirm", confirm),
    ("memory", memory),
    ("decisions", decisions),
    ("hrm_answers", hrm_answers),
    ("altitude", altitude),
    ("reason", reason),
    ("route", route),
    ("govern", govern),
    ("commit", commit),
    ("attend", attend),
    ("execute", execute),
    ("learn", learn),
    ("answer", answer),
)
"""Every step of a turn, in order, by name."""


def run_steps(ctx: TurnContext, steps: tuple[tuple[str, Step], ...] = STEPS) -> Outcome:
    """Run `steps` over `ctx` until one ends the turn; returns its `Outcome`."""
    for _name, step in steps:
        outcome = step(ctx)
        if outcome is not None:
            return outcome
    raise HRMError.internal("the turn's steps ended without an answer (the last must give one)")
