"""A small model reads the person's preferences next to the question as well (D60)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hrm.config import load_config
from hrm.context import ContextItem, preference_reminder
from hrm.home import HRMHome
from hrm.llm import Message
from hrm.pipeline import HRM
from hrm.testing import ScriptedAdapter

BULLETS = "Always answer with a bullet list"
SHORT = "From now on, keep answers under 5 lines."
QUESTION = "How do I list the files changed in the last commit?"
REMINDER = (
    "(Follow my standing preferences: Always answer with a bullet list; "
    "From now on, keep answers under 5 lines.)"
)


def _last_question(model: ScriptedAdapter) -> Message:
    calls = [c for c in model.calls if c.config is not None and c.config.purpose == "respond"]
    return calls[-1].messages[-1]


def _talk(home: HRMHome, provider: str, setting: str | None = None) -> tuple[Message, dict]:
    HRM.open(home, "ADMIN", "offline").close()
    config = load_config(home).config
    if setting is not None:
        config = replace(config, llm=replace(config.llm, restate_preferences=setting))
    model = ScriptedAdapter(["- `git show --name-only HEAD`"], provider=provider, repeat=True)
    with HRM.open(home, "ADMIN", model, config=config) as h:
        h.turn(BULLETS)
        h.turn(SHORT)
        result = h.turn(QUESTION)
    return _last_question(model), result.decision.execution


def test_the_in_process_model_gets_the_canon_after_the_question(home: HRMHome) -> None:
    said, execution = _talk(home, "local")
    assert said.content == f"{QUESTION}\n\n{REMINDER}"
    assert execution["preferences_restated"] == 2


@pytest.mark.parametrize(("provider", "setting"), [("anthropic", None), ("local", "off")])
def test_other_models_or_off_get_the_question_as_said(
    home: HRMHome, provider: str, setting: str | None
) -> None:
    said, execution = _talk(home, provider, setting)
    assert said.content == QUESTION
    assert "preferences_restated" not in execution


def test_on_restates_for_any_model(home: HRMHome) -> None:
    said, _ = _talk(home, "openai", "on")
    assert said.content.endswith(REMINDER)


def test_without_canon_nothing_is_added(home: HRMHome) -> None:
    model = ScriptedAdapter(["an answer"], provider="local", repeat=True)
    with HRM.open(home, "ADMIN", model) as h:
        h.turn(QUESTION)
    assert _last_question(model).content == QUESTION


def test_the_reminder_holds_only_canon_a_few_and_short() -> None:
    items = [ContextItem("working_set", "w", "the billing migration", 0.9)]
    items += [ContextItem("canon", f"c{i}", f"Preference number {i}.", 1.0) for i in range(8)]
    items.append(ContextItem("canon", "long", "word " * 100, 1.0))
    reminder, count = preference_reminder(items)
    assert count == 5
    assert "billing" not in reminder
    assert reminder == (
        "(Follow my standing preferences: Preference number 0; Preference number 1; "
        "Preference number 2; Preference number 3; Preference number 4.)"
    )
    long_one, _ = preference_reminder(items[-1:])
    assert len(long_one) < 260 and long_one.endswith("….)")
    assert preference_reminder([]) == ("", 0)
