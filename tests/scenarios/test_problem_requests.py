""""Mark the webhook problem as done" resolves it; "Let's park the offsite for now." pauses it
(D82).

"Can we mark the webhook problem as done?" went to the model as a question: the problem stayed
open and went on competing for focus, and only `/resolve` or `hrm problems resolve` could
close it.
"""

from __future__ import annotations

from hrm.governance.problems import ProblemStatus
from hrm.home import HRMHome
from hrm.llm import LLMCallConfig, Message
from hrm.pipeline import HRM
from hrm.testing import ScriptedAdapter, ScriptedReply

OFFSITE = "I'm planning a team offsite for 12 people in March."
WEBHOOK = "Forget the offsite for now, the payment webhook is failing in production."


def _echo(messages: list[Message], system: str, config: LLMCallConfig | None) -> str:
    return f"Noted: {messages[-1].content}"


def _model() -> ScriptedAdapter:
    return ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)


def _responds(model: ScriptedAdapter) -> list[str]:
    return [c.messages[-1].content for c in model.calls
            if c.config is not None and c.config.purpose == "respond"]  # fmt: skip


def _statuses(h: HRM) -> dict[str, ProblemStatus]:
    return {p.title: p.status for p in h.focus.problem_registry.list()}


def test_a_named_problem_is_resolved_and_hrm_says_so(home: HRMHome) -> None:
    model = _model()
    with HRM.open(home, "ADMIN", model) as h:
        h.turn(OFFSITE)
        h.turn(WEBHOOK)
        h.turn("Let's get back to the offsite.")
        done = h.turn("Can we mark the webhook problem as done?")
        statuses = _statuses(h)
        events = [r.data for r in h.stack.decision_ledger.tail(40) if r.kind == "problem_resolved"]
    assert done.action == "resolve"
    assert done.response == "Resolved ‘The payment webhook is failing in production’."
    assert "Can we mark" not in " ".join(_responds(model))  # hrm answered: no model call
    assert statuses == {
        OFFSITE: ProblemStatus.ACTIVE,  # focus stays where it was
        "The payment webhook is failing in production.": ProblemStatus.RESOLVED,
    }
    assert events[-1]["by"] == "person" and events[-1]["was"] == "paused"
    asked = done.decision.problem_request
    assert asked is not None and asked["resolution"] == "resolved" and asked["ref"] == "webhook"


def test_this_is_the_work_in_focus_and_its_commitment_completes(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Let's focus on the billing migration script for the next 3 turns")
        before = h.focus.commitments.get_active()
        done = h.turn("OK, mark this as done.")
        after = h.focus.commitments.get_active()
        problems = h.focus.problem_registry.list()
    assert before is not None and after is None
    assert done.decision.commitment_after is None
    assert [p.status for p in problems] == [ProblemStatus.RESOLVED]


def test_the_rest_of_the_message_is_answered_without_the_closed_problem(home: HRMHome) -> None:
    model = _model()
    with HRM.open(home, "ADMIN", model) as h:
        h.turn(OFFSITE)
        rest = h.turn("We're done with this one, thanks! How do I rename a git branch?")
        statuses = _statuses(h)
    assert rest.action == "respond"
    assert rest.response.startswith("Noted: We're done with this one")  # the model saw it all
    assert "Resolved ‘I'm planning a team offsite for 12 people in March’." in rest.response
    assert rest.decision.arbitration["disposition"] == "switch"  # nothing was in focus
    assert statuses[OFFSITE] is ProblemStatus.RESOLVED
    assert statuses["How do I rename a git branch?"] is ProblemStatus.ACTIVE


def test_a_name_that_matches_no_open_problem_changes_nothing(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(OFFSITE)
        missed = h.turn("Mark the migration step as done.")
        statuses = _statuses(h)
    assert missed.action == "resolve"
    assert "No open problem is called “migration step”" in missed.response
    assert statuses == {OFFSITE: ProblemStatus.ACTIVE}
    assert missed.decision.problem_request is not None
    assert missed.decision.problem_request["resolution"] == "no open problem matches"


def test_a_parked_problem_waits_until_the_person_goes_back(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(OFFSITE)
        parked = h.turn("Let's park the offsite for now.")
        question = h.turn("How do I rotate a Stripe signing secret?")
        back = h.turn("Where were we?")
        statuses = _statuses(h)
    assert parked.action == "park"
    assert parked.response == "Parked ‘I'm planning a team offsite for 12 people in March’."
    # The question is no follow-up of the parked offsite: a problem of its own.
    assert question.decision.arbitration["candidate_match"] == "new"
    assert back.action == "switch" and back.response.startswith("Back to ‘I'm planning")
    assert statuses[OFFSITE] is ProblemStatus.ACTIVE
    assert statuses["How do I rotate a Stripe signing secret?"] is ProblemStatus.PAUSED


def test_where_were_we_after_parking_goes_back_to_what_the_parked_work_interrupted(
    home: HRMHome,
) -> None:
    wedding = "I'm organizing my sister's wedding in September and need a plan."
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(wedding)
        h.turn("Separately, my car needs its annual inspection before July.")
        h.turn("switch")
        h.turn("Which documents do I need for the inspection?")
        h.turn("Let's park the car inspection for now.")
        back = h.turn("Where were we?")
    assert back.action == "switch"
    assert back.response.startswith(f"Back to ‘{wedding}’")


def test_a_new_process_sees_the_problem_closed(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(OFFSITE)
        h.turn("Close this thread.")
    with HRM.open(home, "ADMIN", "offline") as h:
        assert h.focus.problem_registry.get_active() is None
        nothing = h.turn("Mark it as done.")
    assert "nothing to resolve" in nothing.response


def test_parking_the_work_in_focus_abandons_its_commitment(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Let's focus on the billing migration script for the next 3 turns")
        commitment = h.focus.commitments.get_active()
        h.turn("Put this on hold.")
        events = [r.data for r in h.stack.decision_ledger.tail(40) if r.kind == "problem_paused"]
        history = h.focus.commitments.history()
    assert commitment is not None
    assert events[-1]["commitment_abandoned"] == commitment.id
    assert history[0].id == commitment.id and history[0].status == "abandoned"


def test_what_the_message_tells_of_the_closed_work_opens_no_problem(home: HRMHome) -> None:
    model = _model()
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("My pytest run fails: the invoice total is 2.9999999 instead of 3.")
        done = h.turn("Done, switched to Decimal and it passes. Close this one.")
        problems = h.focus.problem_registry.list()
    assert done.action == "respond"  # the model answers the message as said
    assert done.response.startswith("Noted: Done, switched to Decimal and it passes.")
    assert "Resolved ‘My pytest run fails" in done.response
    assert [p.status for p in problems] == [ProblemStatus.RESOLVED]  # no "Done, …" problem
    assert "what the message tells of the closed problem opens none" in done.decision.notes


def test_a_question_beside_closing_the_work_is_a_problem_of_its_own(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("My pytest run fails: the invoice total is 2.9999999 instead of 3.")
        h.turn("Close this one. How do I rename a git branch?")
        statuses = _statuses(h)
    assert statuses["How do I rename a git branch?"] is ProblemStatus.ACTIVE
    assert ProblemStatus.RESOLVED in statuses.values()


def test_what_is_open_is_answered_from_the_registry(home: HRMHome) -> None:
    # D87: "What's still open?" was a problem of its own, titled by the question.
    model = _model()
    with HRM.open(home, "ADMIN", model) as h:
        h.turn(OFFSITE)
        h.turn("Unrelated: how do I rename a git branch?")
        listed = h.turn("What's still open?")
        h.turn("Let's park the offsite for now.")
        parked = h.turn("What's on my plate?")
        titles = [p.title for p in h.focus.problem_registry.list()]
    assert listed.action == "list"
    assert listed.response == (
        "In focus: ‘I'm planning a team offsite for 12 people in March’.\n"
        "Queued: ‘How do I rename a git branch?’."
    )
    assert parked.response.startswith("Nothing is in focus.\nQueued: ")
    assert "What's" not in " ".join(_responds(model)) and len(titles) == 2


def test_a_part_of_the_work_said_done_is_asked_about(home: HRMHome) -> None:
    # D443: "ok login bug done. next the PR" (read by the sentence model) resolved a problem
    # titled by all three tasks of the day.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I have three things today: fix the login bug, review Ana's PR, and write "
               "the release notes")  # fmt: skip
        part = h.turn("ok login bug done. next the PR")
        active = h.focus.problem_registry.get_active()
        assert active is not None and active.status is ProblemStatus.ACTIVE
        assert [i["kind"] for i in part.decision.reading["intents"]] == ["resolve"]
        assert "Do you want me to resolve “I have three things today" in part.response
        whole = h.turn("This is resolved.")  # naming nothing: the whole
        assert h.focus.problem_registry.get_active() is None, whole.response
