"""`/why` in `hrm chat`: the last decision record, read as sentences, one layer a line.

The record is JSON of some 150 lines; a person asking "why did it do that?" wants the answer
in the order the turn decided it — which problem, what kind of input, which strategy and
action, what Focus allowed, what the model saw, what was written and learned — and the
numbers that decided each. `/why json` still prints the whole record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hrm._text import shorten

__all__ = ["explain"]

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
        _action, _focus, _commitment, _context, _model, _writes, _learning,
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
        rows.append(("learning", f"{kind}{pattern}{confidence}"))
    return rows
