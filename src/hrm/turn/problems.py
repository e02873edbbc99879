"""The turn's step for what the person asks of a problem itself (D82): "Mark the webhook
problem as done" resolves it, "Let's park the offsite for now." pauses it, and "What's still
open?" lists what is open (D87).

Acted on before arbitration, inside the turn, with the same effect as ``/resolve`` and
`HRM.resolve_problem`: a commitment on a resolved problem completes, one on a parked problem
is abandoned, and the change is an event in the decision ledger, ``by: person``.
"""

from __future__ import annotations

from typing import Any

from hrm._text import shorten
from hrm.governance.arbiter import named_problem
from hrm.governance.problems import Problem, ProblemStatus
from hrm.reading.rules.problems import ProblemRequest
from hrm.turn.records import DecisionRecord, ProblemRequestRecord

__all__ = ["act_on_problem", "open_problems"]

_DONE = {"resolve": ("resolved", "Resolved"), "park": ("paused", "Parked")}


def act_on_problem(
    focus: Any,
    db: Any,
    request: ProblemRequest,
    *,
    last_topic: Any,
    record: DecisionRecord,
    event: Any,
) -> list[str]:
    """Resolve or pause the problem `request` names, or list what is open; returns the notes
    for the answer.

    "it", "this", "this one" are the active problem, or with none the one the last input went
    to. A name that matches no open problem changes nothing and says so.
    """
    registry = focus.problem_registry
    if request.kind == "list":
        record.problem_request = ProblemRequestRecord(
            kind="list", ref=None, clause=request.clause, resolution="listed"
        )
        return [open_problems(registry)]
    target = _target(request, registry, last_topic)
    asked = ProblemRequestRecord(kind=request.kind, ref=request.ref, clause=request.clause)
    record.problem_request = asked
    if target is None:
        asked.resolution = "no open problem matches"
        named = f"called “{request.ref}”" if request.ref else "in focus"
        verb = "resolve" if request.kind == "resolve" else "park"
        return [f"No open problem is {named}, so there was nothing to {verb}. "
                "`/problems` lists the open ones."]  # fmt: skip
    status, said = _DONE[request.kind]
    commitment = focus.commitments.get_active()
    on_it = commitment is not None and commitment.problem_id == target.id
    with db.transaction():
        if request.kind == "resolve":
            registry.resolve(target.id)
            ended = on_it and focus.commitments.complete()
        else:
            registry.pause(target.id)
            ended = on_it and focus.commitments.abandon("the person parked its problem")
    asked.problem_id, asked.title = target.id, target.title
    asked.was, asked.resolution = target.status.value, status
    # As `HRM.resolve_problem` records it, with the commitment it ended.
    ended_id = commitment.id if ended and commitment is not None else None
    ended_as = "commitment_completed" if request.kind == "resolve" else "commitment_abandoned"
    event(
        f"problem_{status}",
        id=target.id,
        title=shorten(target.title, 200),
        was=target.status.value,
        **{ended_as: ended_id},
        by="person",
    )
    title = target.title.rstrip(" .")
    return [f"{said} ‘{title}’" + ("" if title.endswith(("?", "!")) else ".")]


_LISTED = 8
"""Open problems named in hrm's answer to "What's still open?"; `/problems` lists them all."""


def open_problems(registry: Any) -> str:
    """What is open, for "What's still open?" (D87): the problem in focus, then the queued and
    the paused ones, most urgent and most recently touched first."""
    problems = [p for p in registry.list() if p.status is not ProblemStatus.RESOLVED]
    if not problems:
        return "Nothing is open."
    order = {ProblemStatus.ACTIVE: 0, ProblemStatus.QUEUED: 1, ProblemStatus.PAUSED: 2}
    problems.sort(key=lambda p: (order.get(p.status, 3), -p.priority,
                                 -p.last_progress_at.timestamp()))  # fmt: skip
    lines = [] if problems[0].status is ProblemStatus.ACTIVE else ["Nothing is in focus."]
    for status, label in ((ProblemStatus.ACTIVE, "In focus"), (ProblemStatus.QUEUED, "Queued"),
                          (ProblemStatus.PAUSED, "Paused")):  # fmt: skip
        titles = [f"‘{p.title.rstrip(' .')}’" for p in problems[:_LISTED] if p.status is status]
        if titles:
            lines.append(f"{label}: {'; '.join(titles)}.")
    more = len(problems) - _LISTED
    if more > 0:
        lines.append(f"And {more} more: `/problems` lists them all.")
    return "\n".join(lines)


def _target(request: ProblemRequest, registry: Any, last_topic: Any) -> Problem | None:
    if request.ref is not None:
        return named_problem(request.ref, registry)
    active: Problem | None = registry.get_active()
    if active is not None:
        return active
    problem_id = last_topic.get("problem_id") if isinstance(last_topic, dict) else None
    last: Problem | None = registry.get(str(problem_id)) if problem_id else None
    if last is None or last.status is ProblemStatus.RESOLVED:
        return None
    return last
