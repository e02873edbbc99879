"""Requests read in the middle confidence band: asked about in one short question, settled by
the next yes or no (D150), as a preference held for confirmation is (D36).

"Drop the Celsius thing" when a kept preference says "I prefer Celsius" reads as a request to
forget with less than the act threshold's confidence: hrm asks "Do you want me to forget “I
prefer Celsius”?" and keeps the request in the turn state (`TurnState.pending_intent`). A
request to resolve or park a problem read in that band is asked about the same way. A yes acts
on it; a no keeps what was kept; anything else lets it go, recorded. Never silent: a request
that matches nothing kept says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from hrm.governance.arbiter import named_problem
from hrm.reading.rules.memory import ForgetRequest, kept_matching, kept_text
from hrm.reading.rules.problems import ProblemRequest
from hrm.reading.types import IntentKind
from hrm.turn.facts import forget_all, forget_kept
from hrm.turn.problems import act_on_problem

if TYPE_CHECKING:
    from hrm.reading.types import Intent
    from hrm.turn.context import TurnContext

__all__ = [
    "START", "ask_about_problem", "ask_to_forget", "ask_to_forget_all", "settle_intent",
]

START = "start"
"""The request held after "resume the garden project" named nothing open: start it? (D410)"""

_PROBLEM_KINDS: dict[str, Literal["resolve", "park"]] = {"resolve": "resolve", "park": "park"}


def ask_to_forget(ctx: TurnContext, intent: Intent, request: ForgetRequest) -> list[str]:
    """The note for a request to forget read in the ask band: the question, held in the turn
    state, or that nothing kept matches (then there is nothing to ask)."""
    canon = ctx.services.stack.forgettable()
    keys = kept_matching(canon, request.what or "") if request.what else []
    if len(keys) != 1:
        named = f"“{request.what}”" if request.what else "that"
        if not keys:
            return [f"Nothing I keep matches {named}, so nothing was forgotten."]
        listed = "; ".join(f"“{kept_text(canon[key])}”" for key in keys)
        return [f"More than one thing I keep matches {named}: {listed}. Say which one to forget."]
    said = kept_text(canon[keys[0]]) or request.what
    ctx.state.pending_intent = {
        "kind": IntentKind.FORGET.value, "clause": request.clause, "what": request.what,
        "key": keys[0], "said": said, "asked_turn": ctx.record.turn,
        "confidence": round(intent.confidence, 3),
    }  # fmt: skip
    ctx.event("intent_pending", kind="forget", key=keys[0], confidence=intent.confidence)
    return [f"Do you want me to forget “{said}”? (yes/no)"]


def ask_to_forget_all(
    ctx: TurnContext, intent: Intent, request: ForgetRequest, kinds: tuple[str, ...]
) -> list[str]:
    """The question for "forget all my preferences" / "forget everything you know about me"
    (D436): every kept entry of those kinds, listed, asked about whatever the confidence —
    forgetting them all is never done on one reading — and held in the turn state."""
    canon = ctx.services.stack.forgettable()
    keys = sorted(k for k in canon if k.startswith(kinds) and kept_text(canon[k]) is not None)
    if not keys:
        what = "preferences" if kinds == ("preference.",) else (
            "facts" if kinds == ("fact.",) else "preferences or facts"
        )
        return [f"I keep no {what} of yours, so nothing was forgotten."]
    listed = "; ".join(f"“{kept_text(canon[key])}”" for key in keys)
    said = "that one thing" if len(keys) == 1 else f"these {len(keys)} things"
    ctx.state.pending_intent = {
        "kind": IntentKind.FORGET.value, "clause": request.clause, "what": request.what,
        "keys": keys, "said": said, "asked_turn": ctx.record.turn,
        "confidence": round(intent.confidence, 3),
    }  # fmt: skip
    ctx.event("intent_pending", kind="forget", keys=keys, confidence=intent.confidence)
    return [f"Do you want me to forget {said} I keep: {listed}? (yes/no)"]


def ask_about_problem(ctx: TurnContext, intent: Intent, request: ProblemRequest) -> list[str]:
    """The question for a request to resolve or park a problem read in the ask band, held in
    the turn state; or that no open problem matches (nothing to ask)."""
    registry = ctx.services.focus.problem_registry
    target = named_problem(request.ref, registry) if request.ref else registry.get_active()
    verb = "resolve" if request.kind == "resolve" else "park"
    if target is None:
        named = f"called “{request.ref}”" if request.ref else "in focus"
        return [f"No open problem is {named}, so there was nothing to {verb}."]
    ctx.state.pending_intent = {
        "kind": intent.kind.value, "clause": request.clause, "ref": request.ref,
        "said": target.title, "asked_turn": ctx.record.turn,
        "confidence": round(intent.confidence, 3),
    }  # fmt: skip
    ctx.event("intent_pending", kind=intent.kind.value, problem_id=target.id,
              confidence=intent.confidence)  # fmt: skip
    return [f"Do you want me to {verb} “{target.title.rstrip(' .')}”? (yes/no)"]


def settle_intent(ctx: TurnContext, answer: IntentKind | None) -> str | None:
    """Settle the request held last turn with this input's yes or no; returns the note to
    show, or None when the input answered nothing (the request goes unconfirmed)."""
    held: dict[str, Any] = dict(ctx.state.pending_intent or {})
    ctx.state.pending_intent = None
    kind = held.get("kind")
    if answer is None:
        ctx.record.notes.append(f"the question about a request to {kind} went unanswered")
        ctx.event("intent_unconfirmed", kind=kind, key=held.get("key"))
        return None
    if kind == START:
        return _start(ctx, held, answer)
    if answer is IntentKind.NO:
        ctx.event("intent_declined", kind=kind, key=held.get("key"))
        if kind in _PROBLEM_KINDS:
            return f"Understood — “{held.get('said')}” stays as it is."
        if isinstance(held.get("keys"), list):
            return f"Understood — nothing was forgotten; I still keep {held.get('said')}."
        return f"Understood — I still keep “{held.get('said')}”."
    if kind in _PROBLEM_KINDS:
        asked = ProblemRequest(_PROBLEM_KINDS[kind], held.get("ref"), str(held.get("clause")))
        services = ctx.services
        notes = act_on_problem(services.focus, services.db, asked,
                               last_topic=ctx.state.last_topic, record=ctx.record,
                               event=ctx.event)  # fmt: skip
        return "\n".join(notes)
    request = ForgetRequest(clause=str(held.get("clause") or ""), what=held.get("what"))
    keys = held.get("keys")
    if isinstance(keys, list):  # "forget everything you know about me", confirmed (D436)
        return "\n".join(forget_all(ctx.services.stack, request, [str(k) for k in keys],
                                    record=ctx.record, event=ctx.event))  # fmt: skip
    notes = forget_kept(ctx.services.stack, request, just_kept=None, record=ctx.record,
                        event=ctx.event)  # fmt: skip
    return "\n".join(notes)


def _start(ctx: TurnContext, held: dict[str, Any], answer: IntentKind) -> str:
    """A yes opens the problem the person named and moves to it, as a switch they chose; a no
    starts nothing."""
    title = str(held.get("title") or "").strip()
    if answer is IntentKind.NO or not title:
        ctx.event("intent_declined", kind=START, title=title)
        return "Understood — nothing was started."
    ctx.decided = ctx.services.focus.answered({"title": title}, "switch")
    ctx.event("intent_confirmed", kind=START, title=title)
    return f"Started ‘{title}’; it is in focus now."
