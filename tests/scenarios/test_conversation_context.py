"""The model reads the recent conversation as a conversation: earlier exchanges as messages."""

from __future__ import annotations

import pytest

from hrm.home import HRMHome
from hrm.llm import LLMCallConfig, Message
from hrm.pipeline import HRM
from hrm.testing import ScriptedAdapter, ScriptedReply
from hrm.turn.state import RECENT_CLIP

LONG_ANSWER = "def migrate(db):\n" + "    db.execute('ALTER TABLE invoices ADD COLUMN due DATE')\n" * 30


def _answering(messages: list[Message], system: str, config: LLMCallConfig | None) -> str:
    """The answer to each input: a long one first, then a short one."""
    said = messages[-1].content
    return LONG_ANSWER if said.startswith("Write the migration") else f"Noted: {said}"


def _respond_calls(model: ScriptedAdapter) -> list[list[Message]]:
    return [
        call.messages for call in model.calls
        if call.config is not None and call.config.purpose == "respond"
    ]


def test_a_follow_up_reaches_the_model_after_the_exchanges_it_follows(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Let's add a due date to the billing invoices")
        h.turn("Write the migration for the billing invoices table")
        h.turn("Now make it reversible")
    calls = _respond_calls(model)
    assert len(calls) == 3
    last = calls[-1]
    assert [m.role for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert last[0].content == "Let's add a due date to the billing invoices"
    assert last[2].content == "Write the migration for the billing invoices table"
    assert last[3].content == LONG_ANSWER[:RECENT_CLIP] + "…"  # the answer being followed up
    assert last[-1].content == "Now make it reversible"
    system = model.calls[-1].system
    assert "Recent conversation" not in system and "ALTER TABLE" not in system


def test_a_new_process_sends_the_same_conversation(home: HRMHome) -> None:
    first = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", first) as h:
        h.turn("Let's add a due date to the billing invoices")
        h.turn("Write the migration for the billing invoices table")
    second = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", second) as h:
        h.turn("Now make it reversible")
    (call,) = _respond_calls(second)
    assert [m.content for m in call[:3]] == [
        "Let's add a due date to the billing invoices",
        "Noted: Let's add a due date to the billing invoices",
        "Write the migration for the billing invoices table",
    ]
    assert call[3].content == LONG_ANSWER[:RECENT_CLIP] + "…"


def test_earlier_exchanges_are_shown_as_their_gist(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Write the migration for the billing invoices table")
        h.turn("Which index does it need?")
        result = h.turn("And how long will it lock the table?")
    last = _respond_calls(model)[-1]
    # No longer the last exchange: its gist, cut where a word ends and unmarked, is the start
    # of what the model was shown before (D230)
    assert LONG_ANSWER.startswith(last[1].content) and 300 <= len(last[1].content) <= 400
    assert LONG_ANSWER[len(last[1].content)].isspace()
    kept = [e for e in result.decision.attention_state["retrieved"] if e["source"] == "recent_turn"]
    assert len(kept) == 2  # each exchange is budgeted and recorded like any context item


def test_the_model_sees_its_own_answers_not_hrms_notes_or_hrms_questions(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        noted = h.turn("I prefer concise answers. How do I rename a git branch?")
        assert "\n\n• Noted as canon" in noted.response  # hrm's note, after the model's answer
        waited = h.turn("   ")
        assert waited.action == "wait"  # hrm's own words, no model call
        h.turn("Write the migration for the billing invoices table")
    last = _respond_calls(model)[-1]
    assert [m.role for m in last] == ["user", "assistant", "user"]
    assert last[1].content == "Noted: I prefer concise answers. How do I rename a git branch?"
    assert all("nothing to act on" not in m.content for m in last)


def test_a_message_that_only_stated_a_preference_is_canon_not_conversation(
    home: HRMHome,
) -> None:
    # SmolLM2, shown its own echo of "From now on, keep answers under 10 lines.", gave that
    # line as its answer to every later question (D50).
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Let's add a due date to the billing invoices")
        h.turn("From now on, keep answers under 10 lines.")
        h.turn("Write the migration for the billing invoices table")
    last = _respond_calls(model)[-1]
    assert [m.content for m in last] == [
        "Let's add a due date to the billing invoices",
        "Noted: Let's add a due date to the billing invoices",
        "Write the migration for the billing invoices table",
    ]
    assert "From now on, keep answers under 10 lines" in model.calls[-1].system  # as canon


def test_an_empty_answer_is_not_sent_as_an_empty_message(home: HRMHome) -> None:
    def answering(messages: list[Message], system: str, config: LLMCallConfig | None) -> str:
        return "" if messages[-1].content == "Say nothing" else "Done."

    model = ScriptedAdapter([ScriptedReply(respond=answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Say nothing")
        h.turn("Now say something")
    last = _respond_calls(model)[-1]
    assert [m.content for m in last] == ["Now say something"]


OFFSITE = [
    "I'm planning a team offsite for 12 people in March.",
    "Budget is around 8000 euros.",
]
OUTAGE = [
    "Our database is down and customers can't log in!",
    "The error says too many connections on Postgres.",
]


def _contents(call: list[Message]) -> list[str]:
    return [m.content for m in call]


def test_back_on_a_problem_the_model_sees_its_turns_not_the_interruptions(home: HRMHome) -> None:
    # D80: only the last six turns were shown, whatever they were about; after three on an
    # outage, "What did I say the budget was?" reached the model without the budget.
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        for text in [*OFFSITE, *OUTAGE, "OK it's back up, I raised max_connections to 300."]:
            h.turn(text)
        back = h.turn("Where were we?")
        asked = h.turn("What did I say the budget was?")
    assert back.action == "switch" and back.decision.arbitration["disposition"] == "switch"
    calls = _respond_calls(model)
    outage_turn, last = calls[len(OFFSITE)], calls[-1]
    # The outage was new: it is shown the exchange it came after, nothing older.
    assert _contents(outage_turn)[0] == OFFSITE[1]
    assert OFFSITE[0] not in _contents(outage_turn)
    assert _contents(last)[::2] == [*OFFSITE, "What did I say the budget was?"]
    assert not any("Postgres" in c or "max_connections" in c for c in _contents(last))
    shown = [e for e in asked.decision.attention_state["retrieved"] if e["source"] == "recent_turn"]
    assert len(shown) == 2


def _interrupt(h: HRM, detour: int) -> None:
    """The offsite, the outage for `detour` more turns, then "Where were we?"."""
    for text in OFFSITE:
        h.turn(text)
    h.turn(OUTAGE[0])
    for i in range(detour):
        h.turn(f"The error says too many connections on Postgres replica {i}.")
    h.turn("Where were we?")


@pytest.mark.parametrize("detour", [1, 15])  # within the kept exchanges (D80), beyond (D86)
def test_a_new_process_knows_which_problem_each_turn_was_about(home: HRMHome, detour: int) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        _interrupt(h, detour)
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("What did I say the budget was?")
    (call,) = _respond_calls(model)
    assert _contents(call)[::2] == [*OFFSITE, "What did I say the budget was?"]


def test_a_message_on_a_problem_of_its_own_sees_only_the_exchange_it_follows(
    home: HRMHome,
) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        for text in OFFSITE:
            h.turn(text)
        queued = h.turn("Unrelated: how do I rename a git branch?")
        h.turn("And how do I delete the old one on the remote?")
    assert queued.decision.arbitration["disposition"] == "queue"
    *_, aside, follow_up = _respond_calls(model)
    assert _contents(aside)[::2] == [OFFSITE[1], "Unrelated: how do I rename a git branch?"]
    # The follow-up continues the queued question (D51), and sees that thread alone.
    assert _contents(follow_up)[::2] == [
        "Unrelated: how do I rename a git branch?",
        "And how do I delete the old one on the remote?",
    ]


def test_back_after_a_long_detour_the_model_still_sees_the_problems_turns(home: HRMHome) -> None:
    # D86: twelve exchanges are kept; after fifteen turns on the outage, none was the offsite's.
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        _interrupt(h, 15)
        asked = h.turn("What did I say the budget was?")
    last = _respond_calls(model)[-1]
    assert _contents(last)[::2] == [*OFFSITE, "What did I say the budget was?"]
    shown = [e for e in asked.decision.attention_state["retrieved"] if e["source"] == "recent_turn"]
    assert len(shown) == 2


def test_a_decision_stated_about_the_work_stays_in_its_context(home: HRMHome) -> None:
    # D88: the problem's working set held nothing a person said; twenty turns on, "What did
    # we decide about the invoice totals?" had only the recent exchanges to go by.
    model = ScriptedAdapter([ScriptedReply(respond=_answering)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("The invoice totals are off by a cent in the billing service.")
        stated = h.turn("Let's go with Decimal for the invoice totals.")
        h.turn("Let's go with Decimal for the invoice totals.")  # said again: kept once
        for i in range(15):
            h.turn(f"Now the tax line {i} in the billing service is off too.")
    with HRM.open(home, "ADMIN", model) as h:  # a new process reads it back
        asked = h.turn("What did we decide about the invoice totals?")
        working = h.stack.bus.working.get(asked.decision.problem["id"])  # type: ignore[index]
    (write,) = [w for w in stated.decision.writes if w["target"] == "working_set"]
    assert write["decision"] == "go with Decimal for the invoice totals" and write["approved"]
    assert working is not None and len(working.local_decisions) == 1
    assert "decided: go with Decimal for the invoice totals" in model.calls[-1].system
    sources = [e["source"] for e in asked.decision.attention_state["retrieved"]]
    assert "working_set" in sources
