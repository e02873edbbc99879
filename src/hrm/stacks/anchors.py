"""Salience anchors: HO3 records of what matters to a person (004 §9 Flow A, "priority probe").

An anchor is an append-only record in the governance ledger (``HOT/ledger/governance.jsonl``),
kind ``salience_anchor``; retiring one appends ``salience_anchor_retired``. Anchors may apply to
every stack or to one agent class; a ``must_mention`` anchor is always surfaced first by the
stacks whose attention templates probe for anchors (``ledger_query`` with
``filter: salience_anchors``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hrm._process import new_id
from hrm.errors import HRMError
from hrm.home import HRMHome, parse_agent_class
from hrm.storage.ledger import Ledger

__all__ = ["add_anchor", "read_anchors", "retire_anchor"]


def add_anchor(
    home: HRMHome,
    text: str,
    *,
    agent_class: str | None = None,
    must_mention: bool = False,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Record a salience anchor in HO3; returns it (with its id ``anc_<hex>``)."""
    if not text.strip():
        raise HRMError.validation_failed("A salience anchor needs text", field="text")
    if agent_class is not None:
        parse_agent_class(agent_class)
    anchor = {
        "id": new_id("anc", 12),
        "text": text.strip()[:500],
        "agent_class": agent_class,
        "must_mention": must_mention,
        "tags": list(tags or []),
    }
    with Ledger(home.governance_ledger) as ledger:
        ledger.append("salience_anchor", anchor)
        ledger.commit()
    return anchor


def retire_anchor(home: HRMHome, anchor_id: str, reason: str = "") -> None:
    """Retire an anchor (a new record; nothing is edited or deleted)."""
    with Ledger(home.governance_ledger) as ledger:
        ledger.append("salience_anchor_retired", {"id": anchor_id, "reason": reason})
        ledger.commit()


def read_anchors(
    path: Path, *, kind: str = "salience_anchor", agent_class: str | None = None
) -> list[dict[str, Any]]:
    """Live anchors in a ledger that apply to `agent_class` (all when None), oldest first."""
    if not path.exists():
        return []
    anchors: dict[str, dict[str, Any]] = {}
    with Ledger(path) as ledger:
        for record in ledger.records():
            if record.kind == kind:
                target = record.data.get("agent_class")
                if agent_class is None or target in (None, agent_class):
                    anchors[str(record.data.get("id"))] = dict(record.data)
            elif record.kind == f"{kind}_retired":
                anchors.pop(str(record.data.get("id")), None)
    return list(anchors.values())
