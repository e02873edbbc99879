"""What a turn does with the answer to arbitration's question: switch to the problem, or queue it.

When arbitration cannot decide (001 §12.3's ask band), the turn asks the person and changes
nothing else (001 §12.7). The question waits in the turn state (`TurnState.pending_switch`):
the next input that answers it — "switch", "yes", "now" / "queue", "later", "no" — is acted on
as the person chose, recorded as an arbitration the person decided. On a switch, the question
that was asked about is answered under the problem it belongs to, so the person does not have
to say it again; on a queue, the problem waits and the turn says so. An input that answers
neither lets the question go, recorded, and is handled as usual (as a held preference is, D36).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hrm.governance.arbiter import ArbitrationDecision

__all__ = ["Choice", "asks_to_switch", "held_question", "last_queued", "read_answer"]

Choice = Literal["switch", "queue"]

_SWITCH = re.compile(
    r"^\s*(?:switch|interrupt|yes|yeah|yep|sure|ok(?:ay)?|now|go ahead|do it|please do|"
    r"let'?s (?:switch|do it|do that))\b",
    re.IGNORECASE,
)
_QUEUE = re.compile(
    r"^\s*(?:queue|later|not now|no|nope|stay|keep going|carry on|continue|wait|"
    r"let'?s (?:stay|finish|continue))\b",
    re.IGNORECASE,
)
_BARE_SWITCH = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|yes|sure|fine)[,!.]?\s+)?(?:let'?s\s+|please\s+)?switch"
    r"(?:\s+(?:over|(?:over\s+)?to\s+(?:it|that|this|that one|the new one)))?(?:\s+please)?"
    r"\s*[.!]*\s*$",
    re.IGNORECASE,
)
"""A request to switch that names nothing: "switch", "ok, switch to it", "let's switch"."""
_ANSWER_CHARS = 200
"""An answer to "switch or queue?" is short; a long input that starts with "no" is its own."""
_HELD_INPUT_CHARS = 2000
"""Characters of the asked-about input kept to answer it after a switch (as turn records keep)."""


def read_answer(text: str) -> Choice | None:
    """``switch`` or ``queue`` when `text` answers the question, else ``None``."""
    if len(text) > _ANSWER_CHARS:
        return None
    if _SWITCH.match(text):
        return "switch"
    if _QUEUE.match(text):
        return "queue"
    return None


def held_question(arbitration: ArbitrationDecision, text: str, turn: int) -> dict[str, Any]:
    """What the turn state keeps of an ask, to act on its answer (JSON, for the turn record)."""
    candidate = arbitration.candidate
    return {
        "problem_id": candidate.id if candidate else None,
        "new": arbitration.is_new_candidate,
        "title": candidate.title if candidate else text[:80],
        "description": candidate.description if candidate else text[:500],
        "priority": candidate.priority if candidate else None,
        "input": text[:_HELD_INPUT_CHARS],
        "asked_turn": turn,
        "score": round(arbitration.preempt_score, 4),
    }


def asks_to_switch(text: str) -> bool:
    """Is `text` a bare request to switch ("switch", "ok, switch to it") that names nothing?

    With no question pending, it refers to the topic hrm just said it queued (`hrm chat`'s
    "a new topic … is queued"): `last_queued` is that one. It is never a topic of its own.
    """
    return len(text) <= _ANSWER_CHARS and _BARE_SWITCH.match(text) is not None


def last_queued(last_topic: Any, registry: Any) -> Any:
    """The queued problem the last input went to, if it is still open and queued, else None."""
    from hrm.governance.problems import ProblemStatus

    problem_id = last_topic.get("problem_id") if isinstance(last_topic, dict) else None
    problem = registry.get(str(problem_id)) if problem_id else None
    if problem is None or problem.status is not ProblemStatus.QUEUED:
        return None
    return problem

