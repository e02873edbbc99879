"""The rules tier, table-driven: the minimal pairs of issue 29 (left worked, right failed one
paraphrase away) must both read now, and messages that must trigger nothing read nothing."""

from __future__ import annotations

import pytest

from hrm.config import PolicySurface
from hrm.governance.preferences import PreferenceClassifier
from hrm.reading.reader import available_tiers, read
from hrm.reading.rules.preferences import FOR_A_SPAN, QUESTION_OR_REQUEST, PreferenceRules
from hrm.reading.types import IntentKind, Reading, ReadingContext

_CLASSIFIER = PreferenceClassifier(PolicySurface())
_TIERS = available_tiers(
    PreferenceRules(lambda s: _CLASSIFIER.classify(s, "user"), _CLASSIFIER.spans)
)
_KEPT = ReadingContext(
    kept={"preference.i-prefer-celsius": "I prefer Celsius",
          "fact.my-cat-is-called-tom": "my cat is called Tom"},
    just_kept="fact.my-cat-is-called-tom",
)
K = IntentKind


def _read(text: str, context: ReadingContext = _KEPT) -> Reading:
    return read(text, context, _TIERS)


# (message, the intent it must carry, slots that must be filled as given)
PAIRS: list[tuple[str, IntentKind, dict[str, object]]] = [
    ("for the next 2 turns", K.FOCUS, {"turns": 2}),
    ("for the next two turns", K.FOCUS, {"turns": 2}),
    ("focus on the parser for the next 3 turns", K.FOCUS, {"turns": 3, "topic": "the parser"}),
    ("concentrate on the parser for the next 3 messages", K.FOCUS, {"turns": 3}),
    ("concentrate on the parser, next 3 messages", K.FOCUS, {"turns": 3}),
    ("let's stick with the migration for the next couple of turns", K.FOCUS, {"turns": 2}),
    ("My preference is metric units.", K.PREFERENCE, {"scope": "explicit"}),
    ("My preference: metric units, always.", K.PREFERENCE, {"scope": "explicit"}),
    ("pls use 2-space indentation in all code u send me", K.PREFERENCE, {"scope": "explicit"}),
    ("Where were we?", K.RESUME, {}),
    ("Where we were?", K.RESUME, {}),
    ("what were we working on?", K.RESUME, {}),
    ("what were we working on before?", K.RESUME, {}),
    ("Decision: Netlify.", K.DECISION, {"statement": "Netlify"}),
    ("Decided: Netlify.", K.DECISION, {"statement": "Netlify"}),
    ("Postgres it is.", K.DECISION, {"statement": "go with Postgres"}),
    ("We agreed the release goes out on the 14th", K.DECISION,
     {"statement": "the release goes out on the 14th"}),
    ("forget that", K.FORGET, {}),
    ("delete that from your memory", K.FORGET, {}),
    ("forget about my cat", K.FORGET, {"what": "my cat"}),
    ("Forget what I said about Celsius", K.FORGET, {"what": "Celsius"}),
    ("Mark the webhook problem as done", K.RESOLVE, {"ref": "webhook"}),
    ("This is resolved.", K.RESOLVE, {}),
    ("Problem is solved now, you can close it", K.RESOLVE, {}),
    ("Let's park the offsite for now.", K.PARK, {"ref": "offsite"}),
    ("What's still open?", K.LIST_OPEN, {}),
    ("Remember that our API base URL is https://api.internal", K.FACT,
     {"subject": "our API base URL"}),
    ("Thanks, that's all for today.", K.THANKS, {}),
    ("No, that's wrong", K.NEGATIVE_FEEDBACK, {}),
]


@pytest.mark.parametrize(("text", "kind", "slots"), PAIRS)
def test_both_sides_of_each_minimal_pair_read_as_the_intent(
    text: str, kind: IntentKind, slots: dict[str, object]
) -> None:
    reading = _read(text)
    intent = reading.first(kind)
    assert intent is not None, reading.to_record()
    assert {k: intent.slots.filled().get(k) for k in slots} == slots
    assert intent.confidence >= 0.75 and intent.reader.startswith("rules:")
    assert 0 <= intent.span[0] < intent.span[1] <= len(reading.said)


GUARDED = [
    "I hate that webpack is slow, what are the alternatives?",
    "I hate how slow webpack is, what are alternatives?",
    "I prefer to know why this fails before patching it, can you explain the traceback?",
]


@pytest.mark.parametrize("text", GUARDED)
def test_a_question_or_a_request_never_becomes_a_preference(text: str) -> None:
    reading = _read(text)
    assert not reading.has(K.PREFERENCE)
    assert reading.declined and reading.declined[0].kind is K.PREFERENCE
    assert reading.rest == text  # all of it is for the model to answer


def test_the_guard_says_why_for_a_request_after_the_preference() -> None:
    reading = _read(GUARDED[2])
    assert reading.declined[0].reason == QUESTION_OR_REQUEST


def test_a_preference_said_for_a_number_of_turns_is_a_focus_request() -> None:
    reading = _read("I need you focused on the tax report for 4 turns")
    assert not reading.has(K.PREFERENCE) and reading.has(K.FOCUS)
    assert reading.declined[0].reason == FOR_A_SPAN


def test_a_standing_instruction_put_as_a_question_is_still_one() -> None:
    assert _read("Could you always reply in French?").has(K.PREFERENCE)


NOTHING = [
    "How do I rename a git branch?",
    "The tests for the parser are failing now",
    "I forgot my password, how do I reset it?",
    "show me the next 3 messages in the queue",
    "Is this resolved?",
    "What it is, is a caching bug.",
    "we use Postgres for the orders table",
    "I'll get back to it later",
    "no",
    "yes",
]


@pytest.mark.parametrize("text", NOTHING)
def test_messages_that_must_trigger_nothing_carry_no_command(text: str) -> None:
    commands = {K.PREFERENCE, K.FACT, K.FORGET, K.RESOLVE, K.PARK, K.FOCUS, K.RESUME,
                K.LIST_OPEN, K.DECISION}  # fmt: skip
    found = [i.kind for i in _read(text).intents if i.kind in commands]
    assert found == []


def test_yes_and_no_are_answers_only_while_a_question_waits() -> None:
    asked = ReadingContext(pending="preference")
    assert _read("yes please", asked).first(K.YES) is not None
    assert _read("No, thanks.", asked).first(K.NO) is not None
    assert not _read("yes please").intents
    reply = _read("yes, and add tests to the parser", asked).first(K.YES)
    assert reply is not None and reply.slots.rest == "and add tests to the parser"


def test_an_answer_to_switch_or_queue_and_a_bare_switch() -> None:
    asked = ReadingContext(pending="switch")
    assert _read("later", asked).first(K.QUEUE) is not None
    assert _read("ok, switch", asked).first(K.SWITCH) is not None
    assert _read("switch to it").first(K.SWITCH) is not None


def test_forget_that_needs_something_just_kept() -> None:
    assert not _read("Actually, forget that", ReadingContext()).has(K.FORGET)
    assert _read("Actually, forget that").has(K.FORGET)


def test_forget_about_something_never_kept_is_asked_not_acted_on() -> None:
    intent = _read("forget about my dentist appointment").first(K.FORGET)
    assert intent is not None and 0.45 <= intent.confidence < 0.75


def test_forget_about_the_work_in_focus_sets_it_aside() -> None:
    context = ReadingContext(open_problems=("Write the quarterly report",))
    reading = _read("Forget about the report", context)
    assert not reading.has(K.FORGET) and reading.has(K.SET_ASIDE)


def test_commands_are_left_out_of_what_arbitration_weighs() -> None:
    reading = _read("I prefer Celsius. How do I convert 30F?")
    assert reading.rest == "How do I convert 30F?" and reading.cues.follow_up
    assert _read("pls use 2-space indentation in all code u send me").only_commands


def test_the_reading_is_recorded_with_its_readers() -> None:
    record = _read("Decided: Netlify.").to_record()
    assert record["readers"] == ["rules"]
    [intent] = record["intents"]  # type: ignore[misc]
    assert intent["kind"] == "decision" and intent["reader"] == "rules:decisions"


def test_the_rules_tier_reads_preferences_with_the_default_policy_unless_given_a_stack_s() -> None:
    from hrm.reading.rules.tier import RulesReader

    said = "i really prefer dark roast coffee"
    reading = read(said, ReadingContext(), (RulesReader(),))
    assert [i.kind for i in reading.intents] == [K.PREFERENCE]
