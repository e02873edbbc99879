"""A bare yes or no to "Should I remember …?" is answered by hrm, not the model (D50).

The question is one of hrm's notes, which the model never sees (D42): sent "yes" on its own,
SmolLM2 answered "Yes. So, yes, you can choose a business goal …".
"""

from __future__ import annotations

import pytest

from hrm.home import HRMHome
from hrm.llm import LLMCallConfig, Message
from hrm.pipeline import HRM
from hrm.testing import ScriptedAdapter, ScriptedReply


def _echo(messages: list[Message], system: str, config: LLMCallConfig | None) -> str:
    return f"About: {messages[-1].content}"


def _responds(model: ScriptedAdapter) -> list[list[Message]]:
    return [c.messages for c in model.calls if c.config is not None and c.config.purpose == "respond"]


def _preferences(h: HRM) -> dict[str, str]:
    return {k: v for k, v in h.stack.canon().items() if k.startswith("preference.")}


def test_a_bare_yes_is_answered_by_hrm_and_the_preference_is_canon(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Let's focus on the billing migration for the next 3 turns")
        held = h.turn("Dark mode seems better for late-night work")
        assert "Should I remember" in held.response
        calls = len(_responds(model))
        reply = h.turn("Yes, please.")
        assert len(_responds(model)) == calls  # no model call
        assert reply.action == "confirm" and not reply.asked
        assert reply.response == "Remembered as canon: “Dark mode seems better for late-night work”."
        record = reply.decision
        assert record.preference["resolution"] == "confirmed"
        assert [w["approved"] for w in record.writes] == [True]
        assert record.arbitration["disposition"] == "stay"
        assert record.commitment_after["turns_remaining"] == 1  # the turn still counts
        assert record.strategy == {} and record.execution == {}
        assert _preferences(h) == {
            "preference.dark-mode-seems-better-for-late-night-work":
                "Dark mode seems better for late-night work"
        }
        h.turn("Write the migration step for the invoices table")
    # hrm's answer is not the model's: it is not shown as an earlier answer of its own
    last = _responds(model)[-1]
    assert all("Remembered as canon" not in m.content and m.content != "Yes, please."
               for m in last)


def test_a_bare_no_drops_the_preference_without_a_model_call(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Dark mode seems better for late-night work")
        calls = len(model.calls)
        reply = h.turn("no thanks")
        assert len(model.calls) == calls
        assert reply.action == "confirm"
        assert reply.decision.preference["resolution"] == "declined"
        assert _preferences(h) == {}


def test_a_yes_that_goes_on_confirms_and_the_rest_is_answered(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Dark mode seems better for late-night work")
        reply = h.turn("yes, and now write the migration for the invoices table")
        assert reply.action == "respond"
        assert reply.response.startswith("About: yes, and now write the migration")
        assert "Remembered as canon" in reply.response  # as a note after the answer
        assert reply.decision.preference["resolution"] == "confirmed"


def test_a_bare_yes_with_nothing_held_is_answered_by_the_model(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("Shall I add an index on created_at?")
        reply = h.turn("yes")
        assert reply.action == "respond" and reply.response == "About: yes"


def test_a_message_that_only_states_a_preference_is_answered_by_hrm(home: HRMHome) -> None:
    # D58: the model had nothing to add and echoed the preference back as its answer.
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("How do I read a CSV file with pandas?")
        calls = len(_responds(model))
        noted = h.turn("From now on, keep answers under 10 lines.")
        assert noted.action == "remember" and not noted.asked
        assert noted.response == "Noted as canon: “From now on, keep answers under 10 lines”."
        held = h.turn("Dark mode seems better for late-night work")
        assert held.action == "remember" and held.response.startswith("Should I remember “Dark")
        again = h.turn("From now on, keep answers under 10 lines.")
        assert again.response.startswith("Already canon:")
        assert len(_responds(model)) == calls  # none of the three called the model
        assert not noted.decision.execution and noted.decision.preference["class"] == "pref_explicit"
        assert "preference.from-now-on-keep-answers-under-10-lines" in _preferences(h)
        # the next question is answered by the model, with the preference in its canon and
        # none of hrm's acknowledgements in its conversation
        answered = h.turn("And how do I write it back out?")
        assert answered.action == "respond"
        sent = _responds(model)[-1]
        assert not any("Noted as canon" in m.content or "Should I remember" in m.content
                       for m in sent)


def test_a_preference_with_a_question_is_still_answered_by_the_model(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        result = h.turn("I prefer concise answers. How do I read a CSV file with pandas?")
        assert result.action == "respond"
        assert result.response.startswith("About: ")
        assert result.response.endswith("Noted as canon: “I prefer concise answers”.")


def test_a_conflicting_preference_replaces_the_earlier_one_when_the_person_says_yes(
    home: HRMHome,
) -> None:
    # D70: the note said "Say so if it should replace the earlier preference", and nothing
    # understood saying so: "tabs" stayed canon however often the person said "spaces".
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("I prefer tabs for Python")
        asked = h.turn("I prefer spaces for Python")
        assert asked.response == (
            "This conflicts with “I prefer tabs for Python”, so I kept “I prefer spaces for "
            "Python” for now only. Should it replace the earlier preference? (yes/no)"
        )
        assert _preferences(h) == {"preference.i-prefer-tabs-for-python": "I prefer tabs for Python"}
        calls = len(_responds(model))
        reply = h.turn("yes, replace it")
        assert len(_responds(model)) == calls  # hrm's own question, answered by hrm
        assert reply.response == (
            "Replaced “I prefer tabs for Python” with “I prefer spaces for Python” in canon."
        )
        assert [(w["key"], w["approved"]) for w in reply.decision.writes] == [
            ("preference.i-prefer-tabs-for-python", True),
            ("preference.i-prefer-spaces-for-python", True),
        ]
        canon = h.stack.canon()
        assert canon["preference.i-prefer-spaces-for-python"] == "I prefer spaces for Python"
        assert canon["preference.i-prefer-tabs-for-python"]["retracted"] is True
        h.turn("How should I indent this function?")
    system = [c.system for c in model.calls if c.config is not None
              and c.config.purpose == "respond"][-1]
    assert "I prefer spaces for Python" in system
    assert "I prefer tabs for Python" not in system  # a retracted preference is no canon


def test_a_conflicting_preference_declined_leaves_the_earlier_one(home: HRMHome) -> None:
    model = ScriptedAdapter([ScriptedReply(respond=_echo)], repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn("I prefer tabs for Python")
        h.turn("I prefer spaces for Python")
        reply = h.turn("no")
        assert reply.response == (
            "Understood — “I prefer tabs for Python” stays; “I prefer spaces for Python” holds "
            "for this problem only."
        )
        assert _preferences(h) == {"preference.i-prefer-tabs-for-python": "I prefer tabs for Python"}


@pytest.mark.parametrize(
    ("answer", "reply", "canon"),
    [
        ("yes", "Replaced “please always answer in bullet points” with “stop using bullet "
         "points” in canon.", {"preference.stop-using-bullet-points": "stop using bullet points"}),
        ("no", "Understood — “please always answer in bullet points” stays, and nothing else was "
         "kept.", {"preference.please-always-answer-in-bullet-points":
                   "please always answer in bullet points"}),
    ],
)
def test_a_standing_instruction_taken_back_replaces_the_kept_one_when_confirmed(
    home: HRMHome, answer: str, reply: str, canon: dict[str, str]
) -> None:
    # D415: "stop using bullet points" was asked about and, on yes, kept beside "always answer
    # in bullet points": the model was then shown both.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("pls always answer in bullet points")
        asked = h.turn("stop using bullet points")
        settled = h.turn(answer)
        kept = {k: v for k, v in h.stack.canon().items() if isinstance(v, str)}
    assert asked.response == (
        "Should I remember “stop using bullet points” as your preference, in place of “please "
        "always answer in bullet points”? (yes/no)"
    )
    assert settled.response == reply
    assert kept == canon


def test_a_change_of_mind_stated_as_a_want_is_asked_in_place_of_what_it_revises(
    home: HRMHome,
) -> None:
    # D475: "I want short explanations" is a preference by itself (inferred), so the change
    # of mind was asked about as a new one and both were kept after "yes".
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I'd rather get long detailed explanations")
        asked = h.turn("I changed my mind, I want short explanations, not long ones")
        h.turn("yes")
        kept = [v for k, v in h.stack.canon().items() if isinstance(v, str)]
    assert asked.response == (
        "Should I remember “I want short explanations, not long ones” as your preference, in "
        "place of “I'd rather get long detailed explanations”? (yes/no)"
    )
    assert kept == ["I want short explanations, not long ones"]


@pytest.mark.parametrize(
    ("answer", "canon"),
    [
        ("yes", {"preference.i-prefer-metric-units": "I prefer metric units",
                 "preference.i-want-a-friendly-tone-not-firm": "i want a friendly tone not firm"}),
        ("no", {"preference.i-prefer-metric-units": "I prefer metric units",
                "preference.i-prefer-a-polite-but-firm-tone": "I prefer a polite but firm tone"}),
    ],
)
def test_a_change_of_mind_is_asked_about_in_place_of_what_it_revises(
    home: HRMHome, answer: str, canon: dict[str, str]
) -> None:
    # D428: "i changed my mind, i want a friendly tone not firm" was read as a request for
    # something now and answered as ordinary text; the firm tone stayed canon.
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("my landlord wants to raise the rent and I need to write him a reply")
        h.turn("I prefer a polite but firm tone")
        h.turn("I prefer metric units")
        asked = h.turn("i changed my mind, i want a friendly tone not firm")
        h.turn(answer)
        kept = {k: v for k, v in h.stack.canon().items() if isinstance(v, str)}
        other = h.turn("changed my mind, I want the blue one")  # revises nothing kept
    assert asked.response == (
        "Should I remember “i want a friendly tone not firm” as your preference, in place of "
        "“I prefer a polite but firm tone”? (yes/no)"
    )
    assert kept == canon
    assert other.response == "Should I remember “I want the blue one” as your preference? (yes/no)"


def test_forgetting_the_preference_being_asked_about_answers_no(home: HRMHome) -> None:
    # D431: "ok, forget the German thing" after "Should I remember “I'd like answers in German
    # from now on” …?" was told that nothing kept matched "the German thing".
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I run a small online shop selling handmade candles")
        asked = h.turn("I'd like answers in German from now on")
        assert asked.response.startswith("Should I remember “I'd like answers in German")
        taken_back = h.turn("ok, forget the German thing, English is fine")
        kept = {k: v for k, v in h.stack.canon().items() if isinstance(v, str)}
    assert "Understood — I will not treat that as a preference." in taken_back.response
    assert "Nothing I keep matches" not in taken_back.response
    assert kept == {}


def test_a_turn_that_asks_to_keep_a_preference_is_recorded_as_asking(home: HRMHome) -> None:
    # D493: the record's `asked` (the server's `hrm` extension, /why) was false on a turn
    # whose answer was "Should I remember …? (yes/no)".
    with HRM.open(home, "ADMIN", "offline") as h:
        alone = h.turn("Dark mode seems better for my eyes")
        beside = h.turn("How do I list files? Also, big fonts seem easier on my eyes")
        plain = h.turn("How do I list hidden files?")
    assert alone.response.endswith("(yes/no)") and alone.asked
    assert beside.response.endswith("(yes/no)") and beside.asked
    assert not plain.asked


@pytest.mark.parametrize("answer", ["no I meant light mode", "yes, but make that light mode"])
def test_an_answer_that_corrects_the_preference_asked_about_keeps_the_correction(
    home: HRMHome, answer: str
) -> None:
    # D502: read as a plain no (or yes), it kept nothing (or dark mode) and opened a problem
    # titled "I meant light mode".
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("Dark mode seems better for my eyes")
        result = h.turn(answer)
        kept = [v for k, v in h.stack.canon().items() if isinstance(v, str)]
        opened = h.focus.problem_registry.list()
    assert kept == ["light mode seems better for my eyes"]
    assert result.response == "Remembered as canon: “light mode seems better for my eyes”."
    assert opened == []
