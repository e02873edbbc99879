"""Why a turn went as it did: its decision record, read as sentences, one layer a line.

The record is JSON of some 150 lines; a person asking "why did it do that?" wants the answer
in the order the turn decided it — which problem, what kind of input, which strategy and
action, what Focus allowed, what the model saw, what was written and learned — and the
numbers that decided each. `/why` in `hrm chat` shows the last turn's; `hrm why [TURN]` any
turn of a stack, read from its decision ledger without opening the stack (no session starts,
no lock is taken). `/why json` and `hrm why --json` print the whole record.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from hrm._text import shorten
from hrm.cli._common import HomeOption, JsonOption, console, emit_json, handle_errors
from hrm.cli._table import Column, print_table, stdout_is_terminal

__all__ = ["TurnDecision", "explain", "read_turn", "register", "why"]

Row = tuple[str, str]


def explain(decision: dict[str, Any], events: Sequence[dict[str, Any]] = ()) -> list[Row]:
    """(layer, sentence) rows for one decision record, in the order the turn decided them.

    Args:
        decision: The turn's decision record (`HRM.last_decision`).
        events: The turn's events (`HRM.last_events`): they name the gate a stance change
            passed, which the record states only as before and after.

    Tolerates records of any age: a part the record lacks (a question asked back, an older
    record) is left out, never guessed.
    """
    rows: list[Row] = []
    for part in (
        _arbitration, _preference, _memory, _problem_request, _altitude, _input, _strategy,
        _action, _focus, _plan, _commitment, _context, _model, _writes, _learning,
    ):
        rows += part(decision)
    rows += _stance_changes(decision, events)
    for note in decision.get("notes") or []:
        rows.append(("note", str(note)))
    if decision.get("trace_id"):
        rows.append(("trace", str(decision["trace_id"])))
    return rows


def _title(problem: Any) -> str:
    return f"‘{shorten(str(problem.get('title', '')), 60)}’" if isinstance(problem, dict) else "—"


def _arbitration(d: dict[str, Any]) -> list[Row]:
    arb = d.get("arbitration") or {}
    if not arb:
        return []
    disposition = arb.get("disposition", "?")
    candidate = arb.get("candidate")
    active = d.get("problem")
    match = arb.get("candidate_match")
    # Why this problem: the rule that tied the input to it (D44, D49, D51), unless it is new.
    by = f" ({match})" if match and match != "new" else ""
    if disposition == "stay":
        focus = active or candidate
        what = f"stayed on {_title(focus)}" if focus else "nothing in focus"
    elif disposition == "switch":
        new = " (new)" if arb.get("is_new_candidate") else by
        what = f"switched to {_title(candidate)}{new}"
    elif disposition == "queue":
        new = "new problem " if arb.get("is_new_candidate") else ""
        what = f"queued {new}{_title(candidate)}{by}; focus stayed on {_title(active)}"
    else:
        what = f"asked whether to switch to {_title(candidate)}{by}"
    rows = [("arbitration", f"{disposition}: {what} — {arb.get('reason', '')}")]
    parts = arb.get("components") or {}
    if parts:
        rows.append(("", (
            f"priority {parts.get('candidate_priority', 0):g} against "
            f"{parts.get('active_priority', 0):g} · urgency {parts.get('urgency', 0):.2f} · "
            f"staleness {parts.get('staleness', 0):.2f} · switch cost "
            f"{parts.get('switch_cost', 0):.2f} → score {arb.get('preempt_score', 0):.2f}"
        )))
    return rows


def _preference(d: dict[str, Any]) -> list[Row]:
    pref = d.get("preference") or {}
    if not pref:
        return []
    what = pref.get("statement") or pref.get("key")
    if pref.get("resolution"):
        return [("preference", f"{pref['resolution']}" + (f": {what!r}" if what else ""))]
    if pref.get("not_a_preference"):
        return [("preference", f"none stated ({pref['not_a_preference']})")]
    matched = f" (matched {pref['matched_pattern']!r})" if pref.get("matched_pattern") else ""
    held = " — held until you confirm" if pref.get("needs_confirmation") else ""
    return [("preference", f"{pref.get('class', '?')}{matched}{held}")]


def _memory(d: dict[str, Any]) -> list[Row]:
    memo = d.get("memory_request") or {}
    if not memo:
        return []
    if "forget" in memo:
        keys = ", ".join(memo.get("keys") or ()) or "nothing kept"
        return [("forget", f"{memo.get('resolution', '?')}: {memo['forget']!r} → {keys}")]
    done = memo.get("resolution") or "asked to remember"
    return [("remember", f"{done}: {memo.get('fact')!r} as {memo.get('key')}")]


def _problem_request(d: dict[str, Any]) -> list[Row]:
    asked = d.get("problem_request") or {}
    if not asked:
        return []
    label = str(asked.get("kind") or "?")
    if label == "list":
        return [("problems", f"listed what is open — asked: {asked.get('clause')!r}")]
    if asked.get("problem_id"):
        what = f"‘{asked.get('title')}’ ({asked.get('was')} → {asked.get('resolution')})"
    else:
        what = f"nothing: {asked.get('resolution', '?')}"
    return [(label, f"{what} — asked: {asked.get('clause')!r}")]


def _altitude(d: dict[str, Any]) -> list[Row]:
    alt = d.get("altitude") or {}
    if not alt:
        return []
    signals = ", ".join(alt.get("signals") or []) or "no markers"
    moved = f" (from {alt['from']})" if alt.get("from") and alt["from"] != alt.get("level") else ""
    return [("altitude", (
        f"{alt.get('level', '?')}{moved}, confidence {alt.get('confidence', 0):.2f} — {signals}"
    ))]


def _input(d: dict[str, Any]) -> list[Row]:
    c = d.get("classification") or {}
    if not c:
        return []
    domains = ", ".join(c.get("domain") or []) or "general"
    irreversible = " · irreversible" if c.get("irreversible") else ""
    return [("input", (
        f"{c.get('complexity', '?')} · {c.get('stakes', '?')} stakes · {domains} · uncertainty "
        f"{c.get('uncertainty', 0):.2f} · conflict {c.get('conflict', '?')}{irreversible}"
    ))]


def _strategy(d: dict[str, Any]) -> list[Row]:
    s = d.get("strategy") or {}
    if not s:
        return []
    by = f" (learned pattern {s['pattern_id']})" if s.get("pattern_id") else ""
    rows = [("strategy", f"{s.get('strategy', '?')}{by} — {s.get('reason', '')}")]
    esc = d.get("escalation") or {}
    if "score" in esc:
        moved = (
            "escalated" if esc.get("escalated")
            else "de-escalated by a strong pattern" if esc.get("deescalated")
            else "not escalated"
        )
        rows.append(("escalation", f"score {esc['score']:.2f}: {moved}"))
    request = s.get("request") or {}
    if request.get("class"):
        cues = ", ".join(c for found in (request.get("cues") or {}).values() for c in found)
        second = f"; model's second opinion {request['second_opinion']}" if request.get(
            "second_opinion") else ""
        rows.append(("request", f"{request['class']}{f' ({cues})' if cues else ''}{second}"))
    return rows


def _plan(d: dict[str, Any]) -> list[Row]:
    """A plan run from the turn (issue 33): its status, the steps done, what expired."""
    ex = d.get("execution") or {}
    plan = ex.get("plan") or {}
    steps = plan.get("steps") or []
    if ex.get("action_type") != "execute" or not steps:
        return []
    done = sum(1 for step in steps if step.get("status") == "COMPLETE")
    rows = [("plan", f"{ex.get('plan_status', '?')}: {done}/{len(steps)} steps done")]
    rows += [
        ("step", f"{step.get('order')}. [{step.get('status')}] {step.get('description', '')}")
        for step in steps
    ]
    expiration = ex.get("expiration") or {}
    if expiration:
        rows.append(("ttl", f"expired; partial results kept: {json.dumps(expiration)[:200]}"))
    return rows


def _action(d: dict[str, Any]) -> list[Row]:
    sel = d.get("selected") or {}
    if not sel:
        return []
    count = len(d.get("candidates") or [])
    candidates = "1 candidate" if count == 1 else f"{count} candidates"
    fallback = f"; fallback {sel['fallback']}" if sel.get("fallback") else ""
    return [("action", f"{sel.get('rationale') or sel.get('id')} (of {candidates}{fallback})")]


def _focus(d: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    gov = d.get("governance") or {}
    before, after = d.get("stance_before"), d.get("stance_after")
    if gov:
        if gov.get("fallback_used"):
            denied = "; ".join(gov.get("denied") or [])
            verdict = f"fell back to {gov.get('allowed_type')} ({denied})"
        else:
            verdict = f"allowed {gov.get('allowed_type')}"
        rows.append(("focus", f"{verdict} in stance {after or before}"))
    return rows


def _stance_changes(d: dict[str, Any], events: Sequence[dict[str, Any]]) -> list[Row]:
    changes = [e for e in events if e.get("kind") == "stance_change"]
    if changes:
        return [
            ("stance", (
                f"{e.get('from')} → {e.get('to')} via the {e.get('via_gate')} gate"
                f" ({'passed' if e.get('success', True) else 'denied'}: {e.get('reason')})"
            ))
            for e in changes
        ]
    before, after = d.get("stance_before"), d.get("stance_after")
    if before and after and before != after:
        return [("stance", f"{before} → {after}")]
    return []


def _commitment(d: dict[str, Any]) -> list[Row]:
    before, after = d.get("commitment_before"), d.get("commitment_after")
    if not before and not after:
        return []
    if before and after and before.get("id") == after.get("id"):
        text = (
            f"‘{shorten(str(after.get('description')), 50)}’: {before.get('turns_remaining')} → "
            f"{after.get('turns_remaining')} of {after.get('turns_total')} turns left"
        )
    elif after:
        text = (
            f"created ‘{shorten(str(after.get('description')), 50)}’ for "
            f"{after.get('turns_total')} turns"
        )
    else:
        text = f"‘{shorten(str(before.get('description')), 50)}’ ended"  # type: ignore[union-attr]
    return [("commitment", text)]


def _context(d: dict[str, Any]) -> list[Row]:
    att = d.get("attention_state") or {}
    retrieved = att.get("retrieved")
    if retrieved is None:
        return []
    sources = Counter(str(item.get("source")) for item in retrieved)
    kinds = ", ".join(f"{name} {count}" for name, count in sources.items()) or "nothing"
    excluded = att.get("excluded") or []
    left = sum(1 + len((e.get("more") or {}).get("keys") or []) for e in excluded)
    why = f" ({excluded[0].get('reason')}{', …' if len(excluded) > 1 else ''})" if excluded else ""
    return [("context", (
        f"{kinds}; {left} left out{why}; {att.get('used_tokens', '?')} of "
        f"{att.get('budget_tokens', '?')} tokens"
    ))]


def _model(d: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for wo in d.get("work_orders") or []:
        if wo.get("type") != "llm_call":
            continue
        tokens = (wo.get("input_tokens") or 0) + (wo.get("output_tokens") or 0)
        error = f" ({wo['error_code']})" if wo.get("error_code") else ""
        rows.append(("model", (
            f"{wo.get('provider')}/{wo.get('model')} for {wo.get('purpose', 'a call')}: "
            f"{wo.get('outcome')}{error} · {tokens} tokens · {wo.get('latency_ms')} ms · "
            f"${wo.get('cost') or 0:.4f}"
        )))
    return rows


def _writes(d: dict[str, Any]) -> list[Row]:
    return [
        ("write", (
            f"{w.get('key')} → {w.get('target')}: "
            f"{'approved' if w.get('approved') else 'denied'} ({w.get('reason')})"
        ))
        for w in d.get("writes") or []
    ]


def _learning(d: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for item in d.get("learning") or []:
        kind = str(item.get("event_type", "?")).replace("_", " ")
        pattern = f" {item['pattern_id']}" if item.get("pattern_id") else ""
        confidence = (
            f" (confidence {item['confidence']:.2f})"
            if isinstance(item.get("confidence"), int | float) else ""
        )
        summary = f": {item['summary']}" if item.get("summary") else ""
        rows.append(("learning", f"{kind}{pattern}{confidence}{summary}"))
    return rows


# ── `hrm why` ──────────────────────────────────────────────────────────────────

_RECENT_RECORDS = 200
"""Records read from the ledger's end for the last turn (a turn appends a few dozen)."""


@dataclass(frozen=True, kw_only=True)
class TurnDecision:
    """One turn's decision record and the events it appended before it."""

    agent_class: str
    turn: int
    ts: str
    """When the turn's record was written (the ledger's timestamp)."""
    decision: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    """Each event's payload with its ``kind`` added, oldest first."""

    def to_dict(self) -> dict[str, Any]:
        """What `hrm why --json` prints (and the server's ``/v1/hrm/turns/{n}``)."""
        return {
            "agent_class": self.agent_class,
            "turn": self.turn,
            "ts": self.ts,
            "explanation": [
                {"layer": layer, "text": text}
                for layer, text in explain(self.decision, self.events)
            ],
            "decision": self.decision,
            "events": self.events,
        }


def read_turn(ledger_path: Path, agent_class: str, turn: int | None = None) -> TurnDecision:
    """Turn `turn` (the last one when None) of the decision ledger at `ledger_path`.

    Reads the ledger read-only. Turn numbers grow across sessions; if a number occurs twice
    (a stack whose state was reset), the later turn is the one returned.

    Raises:
        HRMError: ``NOT_FOUND`` when the stack has no such turn (or no turns).
    """
    from hrm.errors import HRMError
    from hrm.pipeline import decision_of
    from hrm.storage.ledger import Ledger

    if not ledger_path.is_file():
        raise HRMError.not_found(
            "turn", "last" if turn is None else str(turn),
            f"stack {agent_class} has none yet; `hrm turn TEXT --as {agent_class}` runs one",
        )
    with Ledger(ledger_path, read_only=True) as ledger:
        records = ledger.tail(_RECENT_RECORDS) if turn is None else ledger.records()
        found: tuple[Any, list[Any]] | None = None
        pending: list[Any] = []
        last = 0
        for record in records:
            if record.kind != "turn":
                pending.append(record)
                continue
            last = int(record.data.get("turn") or last)
            if turn is None or record.data.get("turn") == turn:
                found = (record, pending)
            pending = []
    decision = decision_of(found[0].data) if found is not None else None
    if found is None or decision is None:
        if not last:
            hint = f"stack {agent_class} has none yet; `hrm turn TEXT --as {agent_class}` runs one"
        else:
            hint = f"the last turn of stack {agent_class} is {last}"
        raise HRMError.not_found("turn", "last" if turn is None else str(turn), hint)
    record, before = found
    number = int(record.data.get("turn") or 0)
    events = [{**r.data, "kind": r.kind} for r in before if r.data.get("turn") == number]
    return TurnDecision(
        agent_class=agent_class, turn=number, ts=record.ts, decision=decision, events=events
    )


def why(
    turn: Annotated[
        int | None,
        typer.Argument(help="The turn number (default: the stack's last turn).", min=1,
                       show_default=False),
    ] = None,
    agent_class: Annotated[
        str | None,
        typer.Option("--as", help="The stack: ADMIN or RESIDENT:<name> (default: configuration)."),
    ] = None,
    home: HomeOption = None,
    json_out: JsonOption = False,
) -> None:
    """Explain a turn: the problem, input, strategy, action, what Focus allowed, what was kept."""
    with handle_errors():
        from hrm.config import load_config
        from hrm.home import HRMHome, parse_agent_class

        resolved = HRMHome.resolve(home)
        stack = agent_class or load_config(resolved).config.default_agent_class
        parse_agent_class(stack)
        found = read_turn(resolved.decision_ledger(stack), stack, turn)
    if json_out:
        emit_json(found.to_dict())
        return
    rows = explain(found.decision, found.events)
    if stdout_is_terminal():  # a pipe gets the rows alone, headed by their column names
        console.print(
            f"turn {found.turn} of {found.agent_class} ({found.ts}): why", highlight=False
        )
    print_table(
        [Column("layer", no_wrap=True, style="bold"), Column("why")], rows,
        show_header=False, boxed=False,
    )


def register(app: typer.Typer) -> None:
    """Add `why` to the root app."""
    app.command("why")(why)
