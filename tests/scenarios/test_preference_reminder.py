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


def test_an_answer_that_only_echoes_the_reminder_is_asked_again_without_it(
    home: HRMHome,
) -> None:
    # D66: Qwen answered "What's the quickest fix?" with "- Always answer with a bullet list",
    # then copied that echo into every later answer.
    HRM.open(home, "ADMIN", "offline").close()
    model = ScriptedAdapter(
        ["- Always answer with a bullet list.", "- Rename the column back\n- Redeploy"],
        provider="local",
    )
    pieces: list[str] = []
    with HRM.open(home, "ADMIN", model) as h:
        h.turn(BULLETS)
        result = h.turn("What's the quickest fix?", on_text=pieces.append)
        later = h.turn("And after that?")
    asked = [c.messages[-1].content for c in model.calls
             if c.config is not None and c.config.purpose == "respond"]
    assert asked[:2] == [
        "What's the quickest fix?\n\n(Follow my standing preferences: Always answer with a "
        "bullet list.)",
        "What's the quickest fix?",  # the question as said, once
    ]
    assert result.response.startswith("- Rename the column back\n- Redeploy")
    assert "only repeated your standing preferences" in result.response
    assert result.decision.execution["reminder_echoed"] is True
    assert "asking again" in "".join(pieces)  # a streamed echo is marked, not glued on
    # The echo is not history: the next call sees the real answer as the assistant's.
    history = [m.content for c in model.calls[-1:] for m in c.messages if m.role == "assistant"]
    assert "- Always answer with a bullet list." not in history
    assert later.decision.execution.get("reminder_echoed") is None


@pytest.mark.parametrize(
    ("reply", "echo"),
    [
        ("- Always answer in short bullet points", True),
        ("Always answer in short bullet points.", True),
        ("OK, short bullet points.", True),
        ("- Rename customer_id back\n- Redeploy the job", False),
        ("", False),
    ],
)
def test_an_echo_is_a_reply_with_no_two_words_of_its_own(reply: str, echo: bool) -> None:
    from hrm.context import echoes_reminder

    reminder = "(Follow my standing preferences: Always answer in short bullet points.)"
    assert echoes_reminder(reply, reminder) is echo
