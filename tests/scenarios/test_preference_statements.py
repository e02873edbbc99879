"""Only what the person states as a standing preference becomes canon or is asked about (D45).

"I need to …", "Do I need …?", "I always get this error" used to be canonized as explicit
preferences, and "Which one is better?" was answered with "Should I remember …?".
"""

from __future__ import annotations

import pytest

from hrm.home import HRMHome
from hrm.pipeline import HRM


def _preferences(h: HRM) -> dict[str, str]:
    return {k: v for k, v in h.stack.canon().items() if k.startswith("preference.")}


@pytest.mark.parametrize(
    "text",
    [
        "I need to write a Python function that parses ISO dates. Can you help?",
        "Do I need to restart the server after this change?",
        "I always get this error when I run the tests",
        "I like this approach, can you extend it to handle lists?",
        "Which one is better, asyncio or threads?",
    ],
)
def test_a_task_question_report_or_reaction_is_answered_not_remembered(
    home: HRMHome, text: str
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(text)
        # Answered, directly or by agents when it asks for perspectives (issue 33's routing).
        assert result.action in ("respond", "delegate")
        assert result.decision.writes == []
        assert result.decision.preference["class"] == "pref_inferred_silent"
        assert result.decision.preference["not_a_preference"]
        assert "Noted as canon" not in result.response
        assert "Should I remember" not in result.response
        assert _preferences(h) == {}
        # Nothing is held, so a "yes" to the answer's own question confirms nothing.
        assert h.turn("yes").decision.preference is None
        assert _preferences(h) == {}


def test_the_sentence_that_is_a_preference_is_the_one_remembered(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("I need to fix the login bug. I prefer tabs over spaces.")
        assert result.decision.preference["class"] == "pref_explicit"
        assert _preferences(h) == {"preference.i-prefer-tabs-over-spaces": "I prefer tabs over spaces"}
        assert "Noted as canon: “I prefer tabs over spaces”." in result.response


def test_a_standing_need_is_still_canon_and_an_inferred_one_still_asked(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        need = h.turn("I need answers in British English")
        assert need.decision.preference["class"] == "pref_explicit"
        held = h.turn("Dark mode seems better for late-night work")
        assert held.decision.preference["needs_confirmation"] is True
        assert h.turn("yes").decision.preference["resolution"] == "confirmed"
        assert set(_preferences(h)) == {
            "preference.i-need-answers-in-british-english",
            "preference.dark-mode-seems-better-for-late-night-work",
        }


def test_a_preference_said_mid_problem_is_remembered_and_focus_stays(home: HRMHome) -> None:
    # D46: "I prefer tabs" is about the person, not a problem to work on. It used to be queued
    # as a problem titled by itself, and the follow-up after it, no longer "continuing the
    # last exchange", was queued as a new problem too.
    with HRM.open(home, "ADMIN", "offline") as h:
        first = h.turn("Help me plan the migration of the billing database to postgres 16")
        problem = first.decision.problem["id"]
        h.turn("What are the main risks of the billing migration?")
        for text in ("From now on, always answer in bullet points",
                     "I prefer tabs over spaces in Python code"):
            result = h.turn(text)
            assert result.decision.arbitration["disposition"] == "stay"
            assert result.decision.problem["id"] == problem
            assert [w["target"] for w in result.decision.writes] == ["shared_reference"]
            assert "Noted as canon" in result.response
        follow_up = h.turn("Which tables should move first in the billing migration?")
        assert follow_up.decision.arbitration["disposition"] == "stay"
        assert [p.id for p in h.focus.problem_registry.list()] == [problem]
        assert set(_preferences(h).values()) == {
            "From now on, always answer in bullet points",
            "I prefer tabs over spaces in Python code",
        }


def test_the_rest_of_a_message_with_a_preference_is_arbitrated_and_titled(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("I prefer short answers. I need to fix the login bug before the release")
        assert result.decision.arbitration["disposition"] == "switch"
        assert result.decision.problem["title"] == "I need to fix the login bug before the release"
        assert set(_preferences(h).values()) == {"I prefer short answers"}


def test_a_preference_alone_opens_no_problem(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("Never use emojis in commit messages")
        assert result.decision.arbitration["disposition"] == "stay"
        assert result.decision.problem is None
        assert h.focus.problem_registry.list() == []
        assert set(_preferences(h).values()) == {"Never use emojis in commit messages"}


def test_a_hedged_preference_is_asked_about_and_canon_only_after_yes(home: HRMHome) -> None:
    # D64: "I prefer concise answers, I think" was noted as canon at once in `hrm chat`.
    with HRM.open(home, "ADMIN", "offline") as h:
        asked = h.turn("I prefer concise answers, I think")
        assert asked.response == (
            "Should I remember “I prefer concise answers, I think” as your preference? (yes/no)"
        )
        assert asked.decision.preference["class"] == "pref_inferred_confirm_required"
        assert _preferences(h) == {}
        assert h.turn("yes").action == "confirm"
        assert list(_preferences(h).values()) == ["I prefer concise answers, I think"]
        plain = h.turn("I never use semicolons in JavaScript")  # unhedged: canon at once
        assert plain.response.startswith("Noted as canon")


@pytest.mark.parametrize(
    ("text", "canon"),
    [
        ("Keep answers short from now on, and fix the bug in line 3",
         "Keep answers short from now on"),
        ("From now on answer in French; translate this paragraph", "From now on answer in French"),
    ],
)
def test_a_task_joined_after_a_preference_is_answered_not_stored(
    home: HRMHome, text: str, canon: str
) -> None:
    # The whole sentence was stored as canon and the turn answered "Noted as canon" only:
    # the task in it was never done.
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn(text)
        # Answered, directly or by agents when it asks for perspectives (issue 33's routing).
        assert result.action in ("respond", "delegate")
        assert list(_preferences(h).values()) == [canon]


def test_a_standing_instruction_in_two_parts_is_stored_whole(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        assert h.turn("Always use type hints, and keep functions short").action == "remember"
        assert list(_preferences(h).values()) == ["Always use type hints, and keep functions short"]


def test_a_message_of_two_preferences_opens_no_problem_and_says_which_was_taken(
    home: HRMHome,
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        result = h.turn("I prefer tabs over spaces. I prefer metric units.")
        [kept] = _preferences(h).values()
        other = ({"I prefer tabs over spaces", "I prefer metric units"} - {kept}).pop()
        assert f"say “{other}” on its own" in result.response
        assert h.focus.problem_registry.list() == []
