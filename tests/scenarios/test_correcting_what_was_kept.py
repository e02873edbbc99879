"""Correcting what hrm just kept, in the person's words (D469): "no I meant Fahrenheit",
"actually, make that Tuesday", "scratch that, I prefer answers in English"."""

from __future__ import annotations

import pytest

from hrm.home import HRMHome
from hrm.pipeline import HRM
from hrm.reading.rules.memory import kept_text


def _kept(h: HRM) -> list[str]:
    texts = (kept_text(v) for k, v in h.stack.canon().items()
             if k.startswith(("preference.", "fact.")))
    return sorted(t for t in texts if t)


@pytest.mark.parametrize(
    ("first", "fix", "now"),
    [
        ("I prefer Celsius", "no I meant Fahrenheit", "I prefer Fahrenheit"),
        ("I prefer answers in German", "scratch that, I prefer answers in English",
         "I prefer answers in English"),
        ("Remember that the CI runs on GitHub Actions",
         "scratch that, I meant the CI runs on GitLab", "the CI runs on GitLab"),
        ("Remember that the team meeting is on Monday", "actually, make that Tuesday",
         "the team meeting is on Tuesday"),
        ("Remember that the staging server is staging-02.internal",
         "I was wrong about the staging server, it's staging-05.internal",
         "the staging server is staging-05.internal"),
        ("Remember that my son's school starts at 8:30",
         "sorry, my son's school starts at 8:15, not 8:30", "my son's school starts at 8:15"),
    ],
)
def test_a_correction_replaces_what_was_just_kept_and_says_so(
    home: HRMHome, first: str, fix: str, now: str
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn(first)
        result = h.turn(fix)
        assert _kept(h) == [now]
        assert result.response.startswith(f"Corrected: “{now}” (was “")
        assert h.focus.problem_registry.list() == []  # no problem titled by the correction
        read = [i["kind"] for i in result.decision.reading["intents"]]
        assert "correct" in read  # /why shows it


def test_the_old_value_stays_in_the_history_and_rollback_brings_it_back(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer Celsius")
        h.turn("no I meant Fahrenheit")
        (key,) = [k for k in h.stack.canon() if k.startswith("preference.")]
        history = [kept_text(r.value) for r in h.stack.bus.shared.history(key)]
    assert history == ["I prefer Celsius", "I prefer Fahrenheit"]


@pytest.mark.parametrize(
    ("fix", "now"),
    [
        ("no wait, I meant Postgres not MySQL", "go with Postgres for the database"),
        ("Actually, let's go with Vue instead of MySQL.", "go with Vue"),
    ],
)
def test_a_decision_just_stated_is_corrected_in_its_working_set(
    home: HRMHome, fix: str, now: str
) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("We're setting up a new backend service for orders.")
        stated = h.turn("Let's go with MySQL for the database.")
        h.turn(fix)
        problem = stated.decision.problem["id"]  # type: ignore[index]
        working = h.stack.bus.working.get(problem)
    assert working is not None
    assert [d["decision"] for d in working.local_decisions] == [now]


def test_with_nothing_just_kept_a_correction_is_the_models_to_answer(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer Celsius")
        h.turn("How far is 5 miles in km?")
        result = h.turn("no I meant Fahrenheit")
        assert _kept(h) == ["I prefer Celsius"]
        assert not result.response.startswith("Corrected")


def test_a_question_after_the_correction_is_still_answered(home: HRMHome) -> None:
    with HRM.open(home, "ADMIN", "offline") as h:
        h.turn("I prefer Celsius")
        result = h.turn("no I meant Fahrenheit. How hot is 90 degrees?")
        assert _kept(h) == ["I prefer Fahrenheit"]
    assert "(offline model)" in result.response and "Corrected: “I prefer Fahrenheit”" in (
        result.response
    )
