"""The words the web view shows for stored records: never a Python dict, never a bare key.

Records keep what they keep for programs (`hrm … --json`, the decisions API); a page is read by
a person, so each record a page shows is turned into a sentence here: a forgotten canon entry
says that it was forgotten and why, a ledger that fails verification says where and how to
repair it, and the decision page names the gate behind each step of the stance and a context
item by where it sits in the conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hrm.server.api_errors import LEDGER_REPAIR
from hrm.server.stack_data import CanonStatus, canon_status

__all__ = [
    "GateLine",
    "canon_value",
    "context_label",
    "ledger_problem",
    "ledger_repair",
    "stance_and_gates",
]


def canon_value(value: Any) -> str:
    """A canon version's value as a person reads it: text as it is, a retraction in words,
    anything else as JSON."""
    status = canon_status(value)
    if status is CanonStatus.FORGOTTEN:
        return f"forgotten — you asked: “{value.get('forgotten')}”"
    if status is CanonStatus.REPLACED:
        return f"replaced by {value.get('replaced_by')}"
    if status is CanonStatus.RETRACTED:
        return "taken back"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def ledger_problem(report: dict[str, Any]) -> str:
    """What `hrm ledger verify` found wrong in one ledger, as a sentence ("" when sound)."""
    error = report.get("first_error")
    if report.get("ok") or not isinstance(error, dict):
        return ""
    seq = error.get("seq")
    record = f" (record {seq})" if seq is not None else ""
    return f"Line {error.get('line')}{record}: {error.get('reason')}."


def ledger_repair(report: dict[str, Any]) -> str:
    """The repair of a ledger that does not verify, as the API's error and the CLI say it."""
    return LEDGER_REPAIR.format(path=report.get("path"))


@dataclass(frozen=True, kw_only=True)
class GateLine:
    """One sentence of the decision page's "Stance and gate": the gate it names, if any."""

    gate: str | None
    text: str


def stance_and_gates(decision: dict[str, Any], events: list[dict[str, Any]]) -> list[GateLine]:
    """Every gate the turn went through, by name: each stance change with the gate it passed
    (or was stopped by), then each gate the action was put to — or why none was."""
    lines = _stance_changes(events)
    gates = [g for g in decision.get("gate_decisions") or [] if isinstance(g, dict)]
    lines += [_gate_line(g) for g in gates]
    if not gates:
        lines.append(GateLine(gate=None, text=(
            "No gate was asked for the action: a delegation passes the agent_approval gate and "
            "irreversible high-stakes work the commitment gate; for the rest the stance decides."
            if decision.get("governance") else
            "No action went through Focus's gates: hrm answered this turn itself."
        )))
    return lines


def _gate_line(gate: dict[str, Any]) -> GateLine:
    verdict = "approved" if gate.get("approved") else "denied"
    moves = gate.get("transitions_stance_to")
    then = f", moving the stance to {moves}" if moves else ""
    return GateLine(gate=str(gate.get("gate")), text=f"{verdict}: {gate.get('reason')}{then}.")


def _stance_changes(events: list[dict[str, Any]]) -> list[GateLine]:
    lines = []
    for event in events:
        if not isinstance(event, dict) or event.get("kind") != "stance_change":
            continue
        verdict = event.get("gate_decision") or {}
        passed = verdict.get("approved", event.get("success", True))
        lines.append(GateLine(gate=str(event.get("via_gate")), text=(
            f"{'passed' if passed else 'denied'}: the stance "
            f"{'moved' if passed else 'stayed; it would have moved'} {event.get('from')} → "
            f"{event.get('to')} ({event.get('reason')})."
        )))
    return lines


def context_label(item: dict[str, Any], attention: dict[str, Any]) -> str:
    """Where a context item came from, in words.

    An earlier exchange is keyed ``turn-<i>`` by its place among the exchanges shown this turn
    (0 the oldest), not by its turn number, which the record does not keep (and, on a problem
    come back to, the exchanges shown are that problem's, not the turns just before): it is
    named by its place ("most recent exchange", "2nd most recent exchange") rather than shown
    as a key that reads like a turn number.
    """
    key = str(item.get("key") or item.get("source") or "")
    if item.get("source") != "recent_turn" or not key.startswith("turn-"):
        return key
    places = [
        _place(str(i.get("key"))) for part in ("retrieved", "excluded")
        for i in attention.get(part) or []
        if isinstance(i, dict) and i.get("source") == "recent_turn"
    ]
    known = [p for p in places if p is not None]
    place = _place(key)
    if place is None or not known:
        return key
    back = max(known) + 1 - place
    return "most recent exchange" if back == 1 else f"{_ordinal(back)} most recent exchange"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _place(key: str) -> int | None:
    number = key.removeprefix("turn-")
    return int(number) if number.isdigit() and key.startswith("turn-") else None
