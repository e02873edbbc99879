"""The turn's steps for what the person asks hrm to remember (D73) or to forget (D77), and for
a decision the person states about the work (D88).

"Remember that our API base URL is https://api.internal" is written to the Shared Reference
through the write gate, like an explicit preference, and said back; said again word for word,
it is already canon and nothing is written. "Forget the deadline I told you" retracts the kept
entry it names, and "Actually, forget that" the one the turn before kept.
"""

from __future__ import annotations

from typing import Any

from hrm.reading.rules.decisions import StatedDecision
from hrm.reading.rules.memory import (
    DECISION_KEY,
    ForgetRequest,
    MemoryRequest,
    fact_key,
    kept_matching,
    kept_text,
    without_clause,
)
from hrm.scrubbing import scrub_text
from hrm.turn.preferences import contradicted_canon
from hrm.turn.records import DecisionRecord, FactRequestRecord, ForgetRequestRecord

__all__ = ["forget_all", "forget_kept", "keep_decision", "remember_fact"]


def remember_fact(
    stack: Any, request: MemoryRequest, *, signals: Any, record: DecisionRecord, event: Any
) -> list[str]:
    """Write what the person asked to be remembered; returns the notes for the answer."""
    if not request.fact.strip():
        # "Note this down" names nothing to keep: one short question, never a canon entry
        # made of the pointing words ("this down").
        return ["What should I keep? Say it in one sentence, e.g. “Remember that …”."]
    key = fact_key(request)
    asked = FactRequestRecord(key=key, fact=request.fact, statement=request.statement)
    record.memory_request = asked
    if stack.canon().get(key) == request.fact:
        asked.resolution = "already canon"
        return [f"Already canon: “{request.fact}”."]
    update = _update_of(key, signals)
    decision = stack.write_fact(request.fact, key, signals=signals, conflict=update)
    record.writes.append(decision)
    if decision.get("approved") and decision.get("target") == "shared_reference":
        event("fact_remembered", key=key, fact=request.fact)
        kept = scrub_text(request.fact)
        if kept != request.fact:
            # "my pin code is 9911" is kept as "my pin code is [REDACTED:…]": say what is kept,
            # never that the secret is (D462)
            return [f"Noted as canon, without the secret in it: “{kept}”."]
        return [f"Noted as canon: “{request.fact}”."]
    if decision.get("approved") and decision.get("target") == "working_set":
        # The gate keeps what contradicts the canon for the problem at hand (001 §12.6).
        earlier = "”, “".join(contradicted_canon(signals).values())
        against = f" “{earlier}”" if earlier else " what you told me before"
        return [
            f"This conflicts with{against}, so I kept “{request.fact}” "
            + ("for this problem only." if record.problem is not None else "for now only.")
        ]
    return [f"I did not keep “{request.fact}”: {decision.get('reason')}."]


def _update_of(key: str, signals: Any) -> Any:
    """No conflict when the input contradicts only the fact it names a new value of: "Remember
    that the staging DB is db3" after "… is db2" updates `fact.the-staging-db` (a new version;
    `hrm memory shared history` keeps db2), as the person asked (D378). None: the turn's own
    conflict level, as for any other write."""
    contradicted = contradicted_canon(signals)
    if contradicted and set(contradicted) == {key}:
        from hrm.types import ConflictLevel

        return ConflictLevel.NONE
    return None


def forget_kept(
    stack: Any,
    request: ForgetRequest,
    *,
    just_kept: str | None,
    record: DecisionRecord,
    event: Any,
) -> list[str]:
    """Retract what the person asked hrm to forget; returns the notes for the answer.

    `just_kept` is the key the turn before wrote, what "forget that" means. A request naming
    nothing kept, or more than one thing, changes nothing and says so.
    """
    canon = stack.forgettable()
    if request.what is None:
        keys = [just_kept] if just_kept and kept_text(canon.get(just_kept)) is not None else []
    else:
        keys = kept_matching(canon, request.what)
    asked = ForgetRequestRecord(forget=request.clause, what=request.what, matched=keys)
    record.memory_request = asked
    named = f"“{request.what}”" if request.what else "that"
    if not keys:
        asked.resolution = "nothing kept matches"
        if request.what is None and just_kept is None:
            return ["I kept nothing just before, so “that” names nothing and nothing was "
                    "forgotten. Say what to forget (“forget my address”)."]
        return [f"Nothing I keep matches {named}, so nothing was forgotten."]
    if len(keys) > 1:
        asked.resolution = "ambiguous"
        listed = "; ".join(f"“{kept_text(canon[key])}”" for key in keys)
        return [f"More than one thing I keep matches {named}: {listed}. Say which one to forget."]
    key = keys[0]
    statement = kept_text(canon[key]) or ""
    if key.startswith(DECISION_KEY):
        return _forget_decision(stack, key, statement, request, asked, record, event)
    # "Forget that I live in Lisbon" of "my name is Ana Costa and I live in Lisbon" keeps the
    # name (D83): a fact said in several clauses loses only the one named.
    rest = (
        without_clause(statement, request.what)
        if request.what is not None and key.startswith("fact.") else None
    )
    if rest is not None:
        decision = stack.forget_part(key, rest, asked=request.clause)
        record.writes.append(decision)
        if decision.get("approved"):
            asked.resolution, asked.kept = "forgotten in part", rest
            event("canon_forgotten", key=key, statement=statement, kept=rest)
            return [f"Forgotten: “{request.what}”. Still kept: “{rest}”."]
    else:
        decision = stack.forget(key, asked=request.clause)
        record.writes.append(decision)
    if rest is None and decision.get("approved"):
        asked.resolution = "forgotten"
        event("canon_forgotten", key=key, statement=statement)
        return [f"Forgotten: “{statement}”."]
    asked.resolution = "refused"
    return [f"I could not forget “{statement}”: {decision.get('reason')}."]


def forget_all(
    stack: Any, request: ForgetRequest, keys: list[str], *, record: DecisionRecord, event: Any
) -> list[str]:
    """Retract every kept entry in `keys`, as the person confirmed (D436); the notes to show.
    One already gone (forgotten since the question) is passed over."""
    canon = stack.forgettable()
    asked = ForgetRequestRecord(forget=request.clause, what=request.what, matched=keys)
    record.memory_request = asked
    forgotten: list[str] = []
    for key in keys:
        statement = kept_text(canon.get(key))
        if statement is None:
            continue
        decision = stack.forget(key, asked=request.clause)
        record.writes.append(decision)
        if decision.get("approved"):
            event("canon_forgotten", key=key, statement=statement)
            forgotten.append(f"“{statement}”")
    asked.resolution = "forgotten" if forgotten else "nothing kept matches"
    if not forgotten:
        return ["Nothing of it is kept any more, so nothing was forgotten."]
    return [f"Forgotten: {'; '.join(forgotten)}."]


def _forget_decision(
    stack: Any, key: str, said: str, request: ForgetRequest, asked: ForgetRequestRecord,
    record: DecisionRecord, event: Any,
) -> list[str]:
    """Take a stated decision out of its problem's working set (D424); the notes to show."""
    decision = stack.forget_decision(key, said, asked=request.clause)
    record.writes.append(decision)
    asked.resolution = "forgotten"
    event("decision_forgotten", key=key, decision=said)
    return [f"Forgotten the decision “{said}”; it is no longer part of the problem's notes."]


def keep_decision(
    stack: Any, problem_id: str, stated: StatedDecision, *, turn: int, event: Any
) -> dict[str, Any]:
    """Record a decision the person stated in the problem's working set (D88); returns the
    write as the decision record keeps it. Said quietly: no note in the answer."""
    write: dict[str, Any] = stack.record_decision(
        problem_id, {"decision": stated.decision, "said": stated.sentence, "turn": turn}
    )
    event("decision_recorded", problem_id=problem_id, decision=stated.decision)
    return write
