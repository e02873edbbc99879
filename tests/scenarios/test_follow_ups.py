"""A follow-up stays with the problem it follows, even in words its title does not use."""

from __future__ import annotations

from hrm.home import HRMHome
from hrm.pipeline import HRM

PLAN = "Let's plan the v2 launch of our billing service"
RISKS = "What are the risks of the billing launch?"
FOLLOW_UP = "Which risks matter most for the launch?"  # shares one word with the title


def _arbitration(result: object) -> tuple[str, str]:
    arbitration = result.decision.arbitration  # type: ignore[attr-defined]
    return arbitration["disposition"], arbitration["reason"]


def test_a_follow_up_in_the_last_exchanges_words_stays(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        assert _arbitration(h.turn(RISKS))[0] == "stay"  # shares "billing" and "launch"
        disposition, reason = _arbitration(h.turn(FOLLOW_UP))
        assert disposition == "stay"
        assert "continues the last exchange" in reason
        assert len(h.focus.problem_registry.list()) == 1
        assert _arbitration(h.turn("How do I rename a git branch?"))[0] == "queue"


def test_a_new_process_continues_the_same_exchange(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        h.turn(RISKS)
    with HRM.open(home, "ADMIN", "offline") as h:
        assert _arbitration(h.turn(FOLLOW_UP))[0] == "stay"


def test_after_a_queued_topic_its_words_do_not_pull_focus_to_the_active_problem(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(PLAN)
        assert _arbitration(h.turn("How do I rename a git branch in the release repo?"))[0] == "queue"
        # Its words belong to the queued problem: they are not the active problem's last exchange.
        disposition, reason = _arbitration(h.turn("Does renaming the branch break the release tags?"))
        assert "continues the last exchange" not in reason
        assert disposition != "stay" or "similar" in reason
