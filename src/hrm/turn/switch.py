"""What a turn does with the answer to arbitration's question: switch to the problem, or queue it.

When arbitration cannot decide (001 §12.3's ask band), the turn asks the person and changes
nothing else (001 §12.7). The question waits in the turn state (`TurnState.pending_switch`):
the next input that answers it — "switch", "yes", "now" / "queue", "later", "no", as the
reading stage reads them (`hrm.reading.rules.answers`) — is acted on
as the person chose, recorded as an arbitration the person decided. On a switch, the question
that was asked about is answered under the problem it belongs to, so the person does not have
to say it again; on a queue, the problem waits and the turn says so. An input that answers
neither lets the question go, recorded, and is handled as usual (as a held preference is, D36).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hrm.governance.arbiter import ArbitrationDecision

__all__ = ["Choice", "held_question", "last_queued"]

Choice = Literal["switch", "queue"]

_HELD_INPUT_CHARS = 2000
"""Characters of the asked-about input kept to answer it after a switch (as turn records keep)."""


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


def last_queued(last_topic: Any, registry: Any) -> Any:
    """The queued problem the last input went to, if it is still open and queued, else None."""
    from hrm.governance.problems import ProblemStatus

    problem_id = last_topic.get("problem_id") if isinstance(last_topic, dict) else None
    problem = registry.get(str(problem_id)) if problem_id else None
    if problem is None or problem.status is not ProblemStatus.QUEUED:
        return None
    return problem

