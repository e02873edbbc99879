"""HO1: carries out the action Focus allowed — one model call, a plan, an agent bundle, a
question, or waiting — and reports what happened for evaluation and learning.

Every model call goes through the stack's gateway, so each is a work order in HO1m. A provider
failure never escapes: the outcome says what failed and the turn answers honestly.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hrm._process import new_id
from hrm.altitude.types import ExecutionResult, Plan, PlanStep, PlanStepStatus
from hrm.context import echoes_reminder, preference_reminder
from hrm.errors import HRMError, recover_from_error
from hrm.llm import LLMCallConfig, Message, StreamChunk
from hrm.llm.types import FINISH_LENGTH, FINISH_REPETITION
from hrm.stacks.attention import input_chars

if TYPE_CHECKING:
    from hrm.stacks.factory import CognitiveStack

__all__ = ["ExecutionOutcome", "StackExecutor"]

logger = logging.getLogger(__name__)

MAX_MODEL_INPUT_CHARS = 24_000
"""Longest input handed to a model verbatim; longer input is clipped (and the turn says so)."""


@dataclass
class ExecutionOutcome:
    """What HO1 did with the action."""

    response: str
    result: ExecutionResult
    plan: Plan
    action_type: str
    delivered: bool = False
    """Work was delivered (a plan or bundle finished): Focus moves to evaluation."""
    notes: list[str] = field(default_factory=list)
    show_notes: bool = True
    details: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {
            "action_type": self.action_type,
            "success": self.result.success,
            "errors": list(self.result.errors),
            "delivered": self.delivered,
            "plan": {
                "id": self.plan.id,
                "strategy": self.plan.strategy,
                "steps": [
                    {
                        "order": s.order,
                        "action_type": s.action_type,
                        "status": s.status.value,
                        "description": s.description[:120],
                    }
                    for s in self.plan.steps
                ],
            },
            **self.details,
        }


def _restates_preferences(stack: Any) -> bool:
    """Does this stack's model get the kept canon restated after the person's message (D60)?"""
    setting = stack.config.llm.restate_preferences
    if setting == "auto":
        return getattr(stack.gateway.adapter, "provider", None) == "local"
    return bool(setting == "on")


def _placed(stack: Any, assembled: Any, question: str) -> tuple[str, str]:
    """The system prompt and the person's message as this stack's model is sent them.

    Where hrm runs the model and its prompt cache (``local``), the system prompt is only what
    stays the same from turn to turn (role, canon, salience anchors) and what was retrieved for
    this input follows the person's words: the server then finds the system prompt, the
    conversation and the person's earlier words in its cache and evaluates only this turn's
    new text, where retrieved sections inside the system prompt made it evaluate the whole
    conversation again every turn (D230). Other providers get the whole system prompt.
    """
    retrieved = getattr(assembled, "retrieved", "")
    if not retrieved or getattr(stack.gateway.adapter, "provider", None) != "local":
        return assembled.system, question
    return assembled.stable, f"{question}\n\n{_RETRIEVED_NOTE}\n{retrieved})"


_RETRIEVED_NOTE = "(Context retrieved from memory for this message:"
"""Opens the retrieved sections after the person's words (D230); a closing parenthesis ends
them, as the preference reminder is one parenthesised note (D60)."""


def _single_step_plan(action_type: str, description: str) -> Plan:
    step = PlanStep(order=1, description=description[:200], action_type="respond")
    return Plan(
        id=new_id("plan", 10),
        steps=[step],
        estimated_turns=1,
        requires_agents=False,
        agent_suggestion=None,
        strategy=action_type,
    )


class StackExecutor:
    """Executes governed actions for one stack (HO1 is stateless beyond the work order)."""

    def __init__(self, stack: CognitiveStack) -> None:
        self.stack = stack

    # ── entry ──────────────────────────────────────────────────────────────

    def execute(
        self,
        action: Any,
        turn_input: Any,
        assembled: Any,
        reasoning: Any,
        altitude: Any,
        event: Callable[..., None],
    ) -> ExecutionOutcome:
        kind = action.action_type
        flow = _flow_for(self.stack)
        if flow is not None:
            handled = flow(self, action, turn_input, assembled, reasoning, event)
            if handled is not None:
                return handled
        if kind == "ask":
            return self._ask(turn_input, reasoning)
        if kind == "wait":
            plan = _single_step_plan("wait", "wait for more input")
            plan.steps[0].status = PlanStepStatus.SKIPPED
            return ExecutionOutcome(
                "There is nothing to act on yet — tell me what you would like to do.",
                ExecutionResult(success=True, outputs=[], turns_used=0),
                plan,
                "wait",
            )
        if kind == "execute":
            return self._execute_plan(turn_input, assembled, reasoning, altitude, event)
        if kind == "delegate":
            return self._delegate(action, turn_input, assembled, reasoning, event)
        return self._respond(turn_input, assembled)

    # ── respond ────────────────────────────────────────────────────────────

    def _respond(
        self, turn_input: Any, assembled: Any, *, purpose: str = "respond"
    ) -> ExecutionOutcome:
        plan = _single_step_plan("respond", turn_input.text)
        question, notes = self._model_input(turn_input.text)
        details: dict[str, Any] = {}
        reminder, count = "", 0
        if _restates_preferences(self.stack):
            reminder, count = preference_reminder(getattr(assembled, "items", ()))
        conversation = getattr(assembled, "conversation", ())
        system, question = _placed(self.stack, assembled, question)
        try:
            if reminder:
                details["preferences_restated"] = count
                reply, finish = self._chat(
                    system, f"{question}\n\n{reminder}", purpose=purpose,
                    conversation=conversation,
                )
                if echoes_reminder(reply, reminder):
                    # The model answered the reminder, not the person (D66): ask once more
                    # with the question as said; the echo is not the answer, nor history.
                    details["reminder_echoed"] = True
                    self._show("\n\n(That only repeated your preferences; asking again.)\n\n")
                    notes.append(_ECHO_NOTE)
                    reply, finish = self._chat(
                        system, question, purpose=purpose, conversation=conversation
                    )
            else:
                reply, finish = self._chat(
                    system, question, purpose=purpose, conversation=conversation
                )
        except HRMError as exc:
            plan.steps[0].status = PlanStepStatus.FAILED
            return self._failed(plan, "respond", exc, notes)
        cut = _CUT_NOTES.get(finish or "")
        if cut is not None:
            notes.append(cut)
        plan.steps[0].status = PlanStepStatus.COMPLETE
        plan.steps[0].output = reply
        return ExecutionOutcome(
            reply,
            ExecutionResult(success=bool(reply.strip()), outputs=[reply]),
            plan,
            "respond",
            notes=notes,
            details=details,
        )

    def _chat(
        self,
        system: str,
        text: str,
        *,
        purpose: str,
        max_tokens: int | None = None,
        conversation: Iterable[tuple[str, str]] = (),
    ) -> tuple[str, str | None]:
        """The model's answer and why it ended (``stop``, ``length``, ``repetition``, …).

        ``conversation`` is the exchanges the context kept, sent before the input as the
        person's and the assistant's messages.
        """
        config = LLMCallConfig(purpose=purpose, max_tokens=max_tokens)
        messages = [
            Message(role=role, content=content)
            for said, answered in conversation
            for role, content in (("user", said), ("assistant", answered))
        ]
        messages.append(Message(role="user", content=text))
        sink = self.stack.text_sink
        if sink is not None and purpose == "respond":
            return _streamed(self.stack.gateway.stream(messages, system, config), sink)
        response = self.stack.gateway.chat(messages, system, config)
        return str(response.content or ""), response.finish_reason

    def _show(self, text: str) -> None:
        """Hand `text` to the turn's listener, if any, as a streamed answer's pieces are."""
        sink = self.stack.text_sink
        if sink is None:
            return
        try:
            sink(text)
        except Exception:
            logger.warning("the turn's text listener failed", exc_info=True)

    def _model_input(self, text: str) -> tuple[str, list[str]]:
        limit = MAX_MODEL_INPUT_CHARS
        fits = input_chars(self.stack, text)
        if fits is not None:  # a small window: half of it at most (the context needs the rest)
            limit = min(limit, fits)
        if len(text) <= limit:
            return text, []
        head = text[: limit * 3 // 4]
        tail = text[-limit // 4 :]
        clipped = f"{head}\n[… {len(text) - limit} characters omitted …]\n{tail}"
        return clipped, [
            f"The input was {len(text):,} characters; the model saw {limit:,} of them."
        ]

    def _failed(
        self, plan: Plan, action_type: str, exc: HRMError, notes: list[str]
    ) -> ExecutionOutcome:
        recovery = recover_from_error(exc)
        message = (
            f"The model call failed ({exc.code.value}): {exc.message}. "
            f"Suggested recovery: {recovery['action']}"
            + (f" after {recovery['delay_ms']} ms." if recovery["delay_ms"] else ".")
        )
        return ExecutionOutcome(
            message,
            ExecutionResult(success=False, errors=[str(exc)]),
            plan,
            action_type,
            notes=notes,
            details={"error": exc.to_dict(), "recovery": recovery},
        )

    # ── ask ────────────────────────────────────────────────────────────────

    def _ask(self, turn_input: Any, reasoning: Any) -> ExecutionOutcome:
        classification = reasoning.classification
        vague = _vague_phrase(turn_input.text)
        domain = ", ".join(classification.domain) or "this"
        if vague:
            question = (
                f"Before I go further: what do you mean by “{vague}”, and what outcome do you want?"
            )
        else:
            question = (
                f"To get this right for {domain}: what is the goal, and what constraints "
                "should I respect?"
            )
        plan = _single_step_plan("ask", question)
        plan.steps[0].action_type = "ask"
        plan.steps[0].status = PlanStepStatus.COMPLETE
        return ExecutionOutcome(
            question, ExecutionResult(success=True, outputs=[question]), plan, "ask"
        )

    # ── execute a plan ─────────────────────────────────────────────────────

    def _execute_plan(
        self,
        turn_input: Any,
        assembled: Any,
        reasoning: Any,
        altitude: Any,
        event: Callable[..., None],
    ) -> ExecutionOutcome:
        stack = self.stack
        plan = stack.planner.generate_plan(
            turn_input,
            altitude,
            reasoning.strategy.strategy,
            stance=stack.focus.stance.get_current(),
        )
        violations = stack.planner.plan_violations(plan, stack.focus.stance.get_current())
        for violation in violations:
            event("plan_violation", plan_id=plan.id, violation=violation)
        if violations:
            outcome = self._respond(turn_input, assembled)
            outcome.notes.append(
                "The plan was not allowed in the current stance ("
                + "; ".join(violations)
                + "); answered directly instead."
            )
            return outcome
        if len(plan.steps) <= 1:
            return self._respond(turn_input, assembled)
        commitment = stack.focus.commitments.get_active()
        remaining = commitment.turns_remaining if commitment is not None else None
        event("plan_started", plan_id=plan.id, steps=len(plan.steps), strategy=plan.strategy)
        from hrm.stacks.plans import run_plan

        return run_plan(
            self,
            plan,
            turn_input,
            assembled,
            reasoning,
            event,
            commitment_turns_remaining=remaining,
        )

    # ── delegate ───────────────────────────────────────────────────────────

    def _delegate(
        self,
        action: Any,
        turn_input: Any,
        assembled: Any,
        reasoning: Any,
        event: Callable[..., None],
    ) -> ExecutionOutcome:
        from hrm.stacks.runtime_bridge import execute_bundle

        return execute_bundle(self, action.agent_proposal, turn_input, assembled, event)


_ECHO_NOTE = (
    "The model only repeated your standing preferences, so it was asked again without them "
    "restated."
)
"""Said when an answer echoed the preference reminder (D66)."""

_CUT_NOTES = {
    FINISH_LENGTH: "The answer reached the model's output limit (llm.max_tokens) and stops there.",
    FINISH_REPETITION: "The model began repeating itself, so it was stopped; the answer keeps "
    "one copy of what it repeated.",
}
"""What the person is told when the model's answer did not end by itself."""


def _streamed(
    chunks: Iterator[StreamChunk], sink: Callable[[str], None]
) -> tuple[str, str | None]:
    """The whole answer of a governed stream and its finish reason, each piece handed to
    `sink` as it arrives.

    The listener is the caller's code (a terminal, a web socket): if it fails, the answer still
    completes and is recorded; it just stops being shown piece by piece.
    """
    text = ""
    finish: str | None = None
    listener: Callable[[str], None] | None = sink
    try:
        for chunk in chunks:
            text = chunk.accumulated
            if chunk.done:
                finish = chunk.finish_reason
            if chunk.delta and listener is not None:
                try:
                    listener(chunk.delta)
                except Exception:
                    logger.warning(
                        "the turn's text listener failed; the answer goes on without it",
                        exc_info=True,
                    )
                    listener = None
    finally:
        # Ctrl-C in the listener leaves the stream open: close it now, so its work order is
        # recorded (cancelled) with the turn, not whenever the generator is collected.
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return text, finish


def _flow_for(stack: CognitiveStack) -> Callable[..., ExecutionOutcome | None] | None:
    """A stack-specific flow (004 §9) bound through the stack's templates, if this build has one."""
    try:
        from hrm.stacks.flows import flow_for
    except ImportError:
        return None
    flow: Callable[..., ExecutionOutcome | None] | None = flow_for(stack)
    return flow


_VAGUE = re.compile(
    r"\b(this|that|it|stuff|things?|something|the thing|whatever|some(how|way))\b", re.IGNORECASE
)


def _vague_phrase(text: str) -> str | None:
    match = _VAGUE.search(text[:2000])
    if match is None:
        return None
    start = max(0, match.start() - 20)
    return text[start : match.end() + 20].strip()
