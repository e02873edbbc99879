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
        assert result.action == "respond"
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
