"""Each step alone, over a fake `TurnContext`: what it reads from the `Reading` and writes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hrm.config import PolicySurface
from hrm.governance.preferences import PreferenceClassifier
from hrm.reading.reader import available_tiers, read
from hrm.reading.rules.preferences import PreferenceRules
from hrm.reading.types import Bands, Intent, IntentKind, Reading, ReadingContext, Slots
from hrm.tracing import get_tracer
from hrm.turn.context import Outcome, TurnContext, TurnServices
from hrm.turn.records import DecisionRecord
from hrm.turn.state import TurnState
from hrm.turn.steps.confirm import confirm
from hrm.turn.steps.feedback import feedback
from hrm.turn.steps.forget import forget
from hrm.turn.steps.hrm_answers import hrm_answers
from hrm.turn.steps.memory import not_acted_on
from hrm.turn.steps.problems import problems
from hrm.turn.steps.read import read_message
from hrm.turn.steps.statements import statements
from hrm.types import AltitudeLevel, HRMContext, Stance, TurnInput

_CLASSIFIER = PreferenceClassifier(PolicySurface())
_BANDS = Bands()
_NOTHING = ReadingContext()


class _Kernel:
    preference_classifier = _CLASSIFIER

    def classify_preference(self, statement: str, source: str = "user") -> Any:
        return _CLASSIFIER.classify(statement, source)


class _Stack:
    def __init__(self, canon: dict[str, Any] | None = None) -> None:
        self._canon = canon or {}

    def canon(self) -> dict[str, Any]:
        return self._canon

    def forgettable(self) -> dict[str, Any]:
        return self._canon


class _Registry:
    def list(self) -> list[Any]:
        return []


class _Focus:
    problem_registry = _Registry()


class _Feedback:
    def __init__(self) -> None:
        self.outcomes: list[dict[str, Any]] = []
        self.last_events: list[Any] = []

    def record_outcome(self, signal: Any, routing: Any, outcome: dict[str, Any], **_: Any) -> None:
        self.outcomes.append(outcome)


def _ctx(text: str, *, canon: dict[str, Any] | None = None, state: TurnState | None = None,
         bands: Bands = _BANDS) -> TurnContext:  # fmt: skip
    services = TurnServices(
        stack=_Stack(canon), focus=_Focus(), kernel=_Kernel(), altitude=None, router=None,
        evaluator=None, feedback=_Feedback(), db=None, decisions=None, config=None,  # type: ignore[arg-type]
        bands=bands,
    )  # fmt: skip
    hctx = HRMContext(session_id="S", turn_number=2, problem_id=None,
                      altitude=AltitudeLevel.L2_OPERATIONS, stance=Stance.SENSEMAKING,
                      commitment_id=None, commitment_turns_remaining=None)  # fmt: skip
    events: list[tuple[str, dict[str, Any]]] = []
    record = DecisionRecord(turn=2, session_id="S", agent_class="ADMIN", trace_id="t",
                            input_summary=text)  # fmt: skip
    return TurnContext(
        services=services, state=state or TurnState(), record=record,
        turn_input=TurnInput(text=text, timestamp=datetime(2026, 1, 1, tzinfo=UTC), context=hctx),
        event=lambda kind, /, **payload: events.append((kind, payload)), tracer=get_tracer(),
    )  # fmt: skip


def _with_reading(ctx: TurnContext, context: ReadingContext = _NOTHING) -> TurnContext:
    tiers = available_tiers(
        PreferenceRules(lambda s: _CLASSIFIER.classify(s, "user"), _CLASSIFIER.spans)
    )
    ctx.reading = read(ctx.text, context, tiers)
    return ctx


def test_read_reads_the_message_with_what_the_turn_knows() -> None:
    state = TurnState(last_kept={"key": "fact.cat", "turn": 1})
    ctx = _ctx("forget that", canon={"fact.cat": "my cat is Tom"}, state=state)
    assert read_message(ctx) is None
    assert ctx.just_kept == "fact.cat" and ctx.reading.has(IntentKind.FORGET)
    assert ctx.reading.to_record()["intents"][0]["kind"] == "forget"  # type: ignore[index]


def test_read_takes_a_yes_as_an_answer_only_while_a_question_waits() -> None:
    ctx = _ctx("yes", state=TurnState(pending_preference={"statement": "x", "key": "k"}))
    read_message(ctx)
    assert ctx.reading.has(IntentKind.YES)
    plain = _ctx("yes")
    read_message(plain)
    assert not plain.reading.intents


def test_forget_takes_the_request_and_leaves_its_words_out_of_arbitration() -> None:
    ctx = _with_reading(_ctx("Forget what I said about Celsius. How hot is 30C?"))
    forget(ctx)
    assert ctx.forget is not None and ctx.forget.what == "Celsius"
    assert ctx.heard is not None and ctx.heard.text == "How hot is 30C?"


def test_forget_below_the_ask_threshold_is_an_ordinary_message() -> None:
    ctx = _ctx("forget it")
    ctx.reading = Reading(text="forget it", said="forget it", intents=(
        Intent(IntentKind.FORGET, (0, 9), 0.2, "exemplars"),
    ))  # fmt: skip
    forget(ctx)
    assert ctx.forget is None and ctx.heard is ctx.turn_input
    assert "not sure enough to act" in not_acted_on(ctx)[0]


def test_statements_keep_a_preference_and_a_guarded_question_apart() -> None:
    ctx = _with_reading(_ctx("I prefer metric units. What is 5 miles?"))
    forget(ctx)
    statements(ctx)
    assert ctx.preference is not None and ctx.preference.statement == "I prefer metric units"
    assert ctx.arbitrated is not None and ctx.arbitrated.text == "What is 5 miles?"
    asked = _with_reading(_ctx("I hate how slow webpack is, what are alternatives?"))
    forget(asked)
    statements(asked)
    assert asked.preference is not None and asked.preference.statement is None
    assert asked.arbitrated is asked.turn_input


def test_problems_skip_a_message_that_answered_switch_or_queue() -> None:
    ctx = _with_reading(_ctx("Mark the webhook problem as done"))
    ctx.decided = object()  # type: ignore[assignment]
    assert problems(ctx) is None and ctx.asked_of is None


def test_feedback_judges_the_last_routed_answer_once() -> None:
    state = TurnState(last_signal={"s": 1}, last_routing={"r": 1})
    ctx = _with_reading(_ctx("No, that's wrong", state=state))
    feedback(ctx)
    assert ctx.services.feedback.outcomes[0]["success"] is False
    assert state.last_signal is None and ctx.record.learning[-1]["event_type"] == "negative_feedback"


def test_confirm_answers_a_bare_yes_and_lets_a_longer_reply_through() -> None:
    ctx = _ctx("yes please")
    ctx.reading = Reading(text="yes please", said="yes please", intents=(
        Intent(IntentKind.YES, (0, 10), 0.95, "rules:answers"),
    ))  # fmt: skip
    ctx.confirmation = "Remembered as canon: “x”."

    class _Result:
        class stance_after:
            value = "execution"

        commitment_after = None

    ctx.arbitration = _Result()
    assert confirm(ctx) == Outcome("Remembered as canon: “x”.", "confirm")
    goes_on = _ctx("yes, and add tests")
    goes_on.reading = Reading(text="", said="", intents=(
        Intent(IntentKind.YES, (0, 3), 0.95, "rules:answers", Slots(rest="and add tests")),
    ))  # fmt: skip
    goes_on.confirmation = "noted"
    assert confirm(goes_on) is None


def test_hrm_answers_a_message_that_was_only_commands() -> None:
    ctx = _with_reading(_ctx("pls use 2-space indentation in all code u send me"))
    forget(ctx)
    statements(ctx)
    ctx.notes.append("Noted as canon: “…”.")

    class _Result:
        class stance_after:
            value = "execution"

        commitment_after = None

    ctx.arbitration = _Result()
    outcome = hrm_answers(ctx)
    assert outcome is not None and outcome.action == "remember" and outcome.kind == "preference"


def test_a_problem_request_in_the_middle_band_is_asked_about() -> None:
    class _Problem:
        id, title = "prob_1", "The webhook fails."

    class _Active(_Registry):
        def get_active(self) -> Any:
            return _Problem()

    ctx = _ctx("close it maybe")
    ctx.services.focus.problem_registry = _Active()  # type: ignore[misc]
    ctx.heard = ctx.turn_input
    ctx.reading = Reading(text="close it maybe", said="close it maybe", intents=(
        Intent(IntentKind.RESOLVE, (0, 14), 0.6, "exemplars"),
    ))  # fmt: skip
    problems(ctx)
    assert ctx.notes == ["Do you want me to resolve “The webhook fails”? (yes/no)"]
    assert ctx.state.pending_intent is not None and ctx.state.pending_intent["kind"] == "resolve"
    from hrm.turn.intents import settle_intent

    assert settle_intent(ctx, IntentKind.NO) == "Understood — “The webhook fails.” stays as it is."
    assert ctx.state.pending_intent is None


def test_an_explicit_preference_below_the_act_threshold_is_asked_about() -> None:
    from hrm.turn.preferences import preference_reading

    reading = Reading(text="I prefer tabs", said="I prefer tabs", intents=(
        Intent(IntentKind.PREFERENCE, (0, 13), 0.6, "exemplars",
               Slots(statement="I prefer tabs", scope="explicit")),
    ))  # fmt: skip
    held = preference_reading(reading, Bands())
    assert held is not None and held.classification.needs_confirmation
    assert preference_reading(reading, Bands(act=0.5)) is not None
    assert not preference_reading(reading, Bands(act=0.5)).classification.needs_confirmation  # type: ignore[union-attr]
    assert preference_reading(reading, Bands(act=0.9, ask=0.7)) is None
