"""Which recent exchanges the model is shown as the conversation, and how much of each."""

from __future__ import annotations

from hrm.stacks.attention import _StageRunner
from hrm.turn.state import RECENT_CLIP
from hrm.types import AltitudeLevel, HRMContext, Stance


def _exchanges(turns: list[tuple[str, str, str | None]]) -> list[tuple[str, str]]:
    ctx = HRMContext(
        session_id="s", turn_number=len(turns) + 1, problem_id=None,
        altitude=AltitudeLevel.L2_OPERATIONS, stance=Stance.SENSEMAKING, commitment_id=None,
        commitment_turns_remaining=None,
        recent_inputs=[said for said, _, _ in turns],
        recent_outputs=[answered for _, answered, _ in turns],
        recent_decisions=[{"action": action} for _, _, action in turns if action is not None],
    )
    runner = _StageRunner.__new__(_StageRunner)  # this source reads only the context
    runner.ctx = ctx
    items = list(runner._recent_turns("next", {"limit": 4}))
    return [item.exchange for item in items if item.exchange is not None]


def test_the_conversation_holds_answers_and_clarifying_questions_not_procedure() -> None:
    shown = _exchanges([
        ("Plan the launch", "Here is a plan.", "respond"),
        ("Invoices look wrong", "This looks like a different problem … switch or queue?", "ask_user"),
        ("queue", "Queued ‘Invoices look wrong’ for later.", "queue"),
        ("Help me with this", "Before I go further: what do you mean by “this”?", "ask"),
        ("   ", "There is nothing to act on yet.", "wait"),
        ("I mean the launch checklist", "Here is the checklist.", "respond"),
    ])
    assert [said for said, _ in shown] == [
        "Plan the launch", "Help me with this", "I mean the launch checklist",
    ]


def test_the_last_exchange_is_shown_longer_than_the_earlier_ones() -> None:
    long = "x" * (RECENT_CLIP + 100)
    shown = _exchanges([("first", long, "respond"), ("second", long, "respond")])
    assert shown[0][1] == "x" * 400
    assert shown[1][1] == "x" * RECENT_CLIP + "…"


def test_an_earlier_exchange_is_the_start_of_what_was_shown_when_it_was_the_last() -> None:
    # D230: the gist ends where a word ends and carries no marker, so it is a prefix of the
    # text the model (and its prompt cache) saw the turn before.
    answer = " ".join(f"word{i}" for i in range(200))
    first = _exchanges([("first", answer, "respond")])[0][1]
    later = _exchanges([("first", answer, "respond"), ("second", "ok", "respond")])[0][1]
    assert first == answer
    assert first.startswith(later + " ") and len(later) <= 400
    assert later.split()[-1] in answer.split()


def test_a_context_without_decisions_shows_every_exchange_as_an_answer() -> None:
    # HRMContext.recent_decisions is optional (001 §1.2): a caller that fills only the texts
    # gets them all, as before decisions were kept.
    shown = _exchanges([("Plan the launch", "Here is a plan.", None), ("And then?", "Ship.", None)])
    assert shown == [("Plan the launch", "Here is a plan."), ("And then?", "Ship.")]
