""""switch" with no question pending moves to the topic hrm just queued, and is never a topic.

In `hrm chat` on Qwen: a question was answered and queued as a new topic ("“switch to pytest
run fails” moves it"); the person typed "switch", which was queued as a problem titled
"switch" and answered by the model as a question about switching Python environments.
"""

from __future__ import annotations

import pytest

from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.reader import read
from hrm.reading.types import IntentKind


def asks_to_switch(text: str) -> bool:
    """Is `text`, with no question pending, a bare request to switch?"""
    return read(text).has(IntentKind.SWITCH)

CSV = "How do I read a CSV file with pandas?"
BACKUP = "Our nightly backup job to S3 failed last night with an access denied error"


def test_switch_moves_to_the_topic_queued_last_without_a_model_call(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(CSV)
        queued = h.turn(BACKUP).decision.arbitration
        result = h.turn("ok, switch to it")
        assert result.action == "switch"
        assert result.response == f"Switched to ‘{BACKUP}’."
        d = result.decision
        assert d.arbitration["disposition"] == "switch"
        assert d.arbitration["candidate_problem_id"] == queued["candidate_problem_id"]
        assert d.arbitration["reason"] == "The person chose to switch to the topic just queued"
        assert not d.execution  # no model call
        assert [p.title for p in h.focus.problem_registry.list(ProblemStatus.ACTIVE)] == [BACKUP]
        follow = h.turn("Which IAM permission does it need?").decision.arbitration
        assert follow["candidate_problem_id"] == queued["candidate_problem_id"]


def test_switch_with_nothing_queued_last_changes_nothing_and_says_so(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(CSV)
        h.turn(BACKUP)
        h.turn("How do I read one column of a CSV file with pandas?")  # the active problem
        result = h.turn("switch")
        assert result.action == "switch" and result.response.startswith("No topic is waiting")
        assert result.decision.arbitration["disposition"] == "stay"
        titles = [p.title for p in h.focus.problem_registry.list()]
        assert "switch" not in titles and len(titles) == 2


@pytest.mark.parametrize(
    ("text", "bare"),
    [("switch", True), ("Switch.", True), ("ok, switch to it", True), ("let's switch", True),
     ("yes switch over", True), ("switch to the backup", False), ("switch the flag off", False),
     ("How do I switch branches?", False), ("switch " * 60, False)],
)
def test_what_counts_as_a_bare_switch(text: str, bare: bool) -> None:
    assert asks_to_switch(text) is bare
