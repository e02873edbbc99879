"""Whole conversations: every message goes to the problem it belongs to (D59).

Before D59 a follow-up question that repeated no word of its problem's title was queued as a
new problem: 34 of the first 106 labelled messages went to the right problem, and each
conversation left four to eight problems in `/problems` where the person had raised two.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.scenarios.topic_conversations import HELD_OUT, TUNING, Conversation
from typer.testing import CliRunner

from hrm.cli.app import app
from hrm.pipeline import HRM
from hrm.reading.rules.cues import opens_new_topic
from hrm.turn.records import TurnResult

CASES = {**TUNING, **HELD_OUT}


def _went_to(result: TurnResult) -> str | None:
    """The problem a turn went to: the one it was queued as, else the one in focus after it."""
    decision = result.decision
    arbitration = decision.arbitration
    if arbitration["disposition"] == "ask":
        return None  # a follow-up answered with a question went nowhere
    if arbitration["disposition"] == "queue":
        return str(arbitration["candidate_problem_id"])
    return str(decision.problem["id"]) if decision.problem else None


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_message_goes_to_its_problem(name: str, tmp_path: Path) -> None:
    conversation: Conversation = CASES[name]
    problems: dict[str, str | None] = {}
    wrong: list[str] = []
    with HRM.open(tmp_path / "home", "ADMIN", "offline") as h:
        for label, text in conversation:
            result = h.turn(text)
            went = _went_to(result)
            if label not in problems:  # a new problem: one the conversation has not seen
                if went is None or went in problems.values():
                    wrong.append(f"{text!r} should open a problem; {_why(result)}")
                problems[label] = went
            elif went != problems[label]:
                wrong.append(f"{text!r} should go to {label}; {_why(result)}")
        open_problems = h.focus.problem_registry.list()
    assert not wrong, "\n".join(wrong)
    # A problem is titled by what it is about, not by "Unrelated:" or "Separately,".
    assert not any(opens_new_topic(p.title) for p in open_problems)
    assert len(open_problems) == len(problems)


def _why(result: TurnResult) -> str:
    arbitration = result.decision.arbitration
    return f"{arbitration['disposition']} ({arbitration['candidate_match']})"


def test_hrm_turn_says_which_queued_topic_a_message_went_to(tmp_path: Path) -> None:
    runner = CliRunner()
    where = ["--home", str(tmp_path / "home"), "--provider", "offline"]
    for text in ("I'm migrating our billing service from MySQL to Postgres",
                 "Our mobile app crashes on startup for Android 14 users"):  # fmt: skip
        assert runner.invoke(app, ["turn", text, *where]).exit_code == 0
    follow = runner.invoke(app, ["turn", "Is it a permissions issue?", *where])
    assert follow.exit_code == 0
    # The status line's problem is the one in focus; the queued topic is named beside "queue".
    said = " ".join(follow.output.split())  # the terminal wraps the status line
    assert "arbitration queue (‘Our mobile app crashes on…’)" in said
    assert "problem I'm migrating our billing service" in said
